"""The service on PostgreSQL answers as on SQLite: the same facts remembered through the real
worker and model, recalled with the same fusion, give the same hits, scores and copy counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService

FACTS = [
    "User prefers dark roast coffee",
    "  user prefers DARK roast coffee",  # an exact repeat: an occurrence of the first
    "Coffee machine in the office is broken",
    "Alice takes the 8:15 train",
    "Deploys go out on Fridays from us-east-1",
]
QUERIES = ["coffee", "what does the user drink", "deploy on friday", "train"]


async def _answers(service: MemoryService) -> list[list[tuple[str, float, int]]]:
    async with service.running():
        for fact in FACTS:
            outcome = await service.remember("local", fact, wait_ms=10_000)
            assert outcome.job.status == "done"
        answers = []
        for query in QUERIES:
            found = await service.recall("local", query, limit=5)
            answers.append([(hit.text, hit.score, hit.copies) for hit in found.hits])
    return answers


async def test_recall_answers_as_on_sqlite(tmp_path: Path, pg_url: str, embedder: FastEmbedEmbedder) -> None:
    sqlite = await _answers(MemoryService(load_settings(db_path=tmp_path / "memwal.db"), embedder=embedder))
    postgres = await _answers(MemoryService(load_settings(db_url=pg_url), embedder=embedder))
    assert sqlite[0][0][:3:2] == ("User prefers dark roast coffee", 1)  # the repeat is counted as a copy
    for query, want, have in zip(QUERIES, sqlite, postgres):
        assert [text for text, _, _ in have] == [text for text, _, _ in want], query
        assert [copies for _, _, copies in have] == [copies for _, _, copies in want], query
        # Cosines come from pgvector in float4 against NumPy's: the same to about 1e-7.
        assert [score for _, score, _ in have] == pytest.approx([score for _, score, _ in want], abs=1e-6), query
