from memwal_mcp.service import MemoryService


async def test_remember_then_recall_collapses_duplicates(service: MemoryService) -> None:
    for _ in range(3):
        await service.remember("local", "User prefers dark roast coffee")
    await service.remember("local", "The office coffee machine is broken")  # related, so it back-fills
    result = await service.recall("local", "coffee", limit=2)
    assert [h.text for h in result.hits][0] == "User prefers dark roast coffee"
    assert result.hits[0].copies == 2
    assert len(result.hits) == 2
