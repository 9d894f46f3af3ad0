"""What the dashboard asks of the service beyond the MCP tools: an owner's namespaces, activity
figures from the journal, and a memory's occurrences. Each stays inside the owner's wall."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memwal_mcp.errors import InvalidInput
from memwal_mcp.service import MemoryService


async def _done(service: MemoryService, owner: str, text: str, namespace: str = "default") -> str:
    outcome = await service.remember(owner, text, namespace, wait_ms=20000)
    assert outcome.job.status == "done", outcome.job
    assert outcome.job.memory_id is not None
    return outcome.job.memory_id


async def test_activity_counts_only_the_owners_jobs_by_day_status_and_decision(service: MemoryService) -> None:
    first = await _done(service, "alice", "User prefers dark roast coffee")
    again = await _done(service, "alice", "user prefers DARK roast coffee ")
    await _done(service, "alice", "Deploys go out on Fridays", "work")
    for n in range(4):
        await _done(service, "bob", f"Bob fact number {n} about sailing")

    activity = await service.activity("alice", days=7)

    assert again == first
    assert activity.queue == {"done": 3}
    assert activity.decisions == {"created": 2, "occurrence": 1}
    assert len(activity.per_day) == 7
    today = datetime.now(timezone.utc).date().isoformat()
    assert activity.per_day[-1] == (today, 3)
    assert sum(count for _, count in activity.per_day) == 3
    assert (await service.activity("nobody")).queue == {}


async def test_namespaces_are_the_owners_own_sorted(service: MemoryService) -> None:
    await _done(service, "alice", "Fact in work", "work")
    await _done(service, "alice", "Fact in default")
    await _done(service, "bob", "Bob's own fact", "secret-bob")
    assert await service.namespaces("alice") == ("default", "work")


async def test_history_says_how_often_the_fact_was_repeated(service: MemoryService) -> None:
    memory = await _done(service, "alice", "The office wifi is called Heron")
    await _done(service, "alice", "The office wifi is called Heron")
    await _done(service, "alice", "the office wifi is called heron")
    history = await service.history("alice", memory)
    assert history.occurrences == 2
    assert len(history.jobs) == 3


@pytest.mark.parametrize("days", [0, 367, True, "7"])
async def test_activity_refuses_a_window_out_of_range(service: MemoryService, days: object) -> None:
    with pytest.raises(InvalidInput, match="days must be an integer from 1 to 366"):
        await service.activity("alice", days)


async def test_list_takes_until_and_only_the_expired_or_superseded(service: MemoryService) -> None:
    old = await _done(service, "alice", "The kayak trip to Lake Bled", "default")
    await service.remember("alice", "The ferry ran in 2019", occurred_at="2019-06-01", wait_ms=20000)
    gone = await service.remember("alice", "The flash sale ended", expires_at="2000-01-01", wait_ms=20000)
    new = await service.remember("alice", "The kayak trip is to Lake Bohinj now", supersedes=[old], wait_ms=20000)

    until = await service.list("alice", until="2019-12-31")
    assert [m.text for m in until.items] == ["The ferry ran in 2019"]
    expired = await service.list("alice", include_expired="only")
    assert [m.id for m in expired.items] == [gone.job.memory_id]
    superseded = await service.list("alice", include_superseded="only")
    assert [(m.id, m.superseded_by) for m in superseded.items] == [(old, new.job.memory_id)]
    with pytest.raises(InvalidInput, match="until '2019-12-31' is before since '2020-01-01'"):
        await service.list("alice", since="2020-01-01", until="2019-12-31")
    with pytest.raises(InvalidInput, match="include_expired must be true, false or \"only\", got 'maybe'"):
        await service.list("alice", include_expired="maybe")
