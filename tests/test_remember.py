"""memwal_remember and memwal_remember_status through the real MemoryService.

Real SQLite files in tmp_path, the real bundled embedding model, the real worker.
Counts are read straight from the database file with a separate connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from memwal_mcp.config import Settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import IdempotencyKeyReused, NotFound
from memwal_mcp.recall.format import recall_text
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite.connection import connect
from tests.wrapped_models import PoisonEmbedder

COFFEE = "User prefers dark roast coffee"
OTHERS = [
    "Deploys go out on Fridays from us-east-1",
    "The project database is PostgreSQL 16",
    "The user's cat is named Miso",
    "Team standup is at 9:30 every morning",
]


def rows(path: Path, sql: str, *args: Any) -> list[tuple]:
    conn = connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def count(path: Path, sql: str, *args: Any) -> int:
    return rows(path, sql, *args)[0][0]


# --- the fast path and waiting -----------------------------------------------


async def test_remember_without_wait_returns_queued_job_at_once(service: MemoryService) -> None:
    started = time.monotonic()
    outcome = await service.remember("local", COFFEE)
    elapsed = time.monotonic() - started
    assert outcome.job.status == "queued"
    assert outcome.job.id.startswith("j_")
    assert outcome.replayed is False
    assert outcome.job.decision is None and outcome.job.memory_id is None
    assert elapsed < 1.0


async def test_remember_without_wait_does_not_wait_for_a_worker(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    # Nothing curates here: a remember that waited for curation would hang.
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running(worker=False):
        with anyio.fail_after(2):
            outcome = await svc.remember("local", COFFEE, wait_ms=0)
        assert outcome.job.status == "queued"
        assert count(svc.settings.db_path, "SELECT COUNT(*) FROM remember_jobs WHERE status = 'queued'") == 1


async def test_remember_with_wait_returns_the_curation_outcome(service: MemoryService) -> None:
    outcome = await service.remember("local", COFFEE, wait_ms=5000)
    job = outcome.job
    assert job.status == "done"
    assert job.decision == "created"
    assert job.memory_id is not None and job.memory_id.startswith("m_")
    stored = rows(service.settings.db_path, "SELECT body, owner, namespace FROM memories WHERE id = ?", job.memory_id)
    assert stored == [(COFFEE, "local", "default")]


# --- idempotency -------------------------------------------------------------


async def test_same_key_twice_is_one_job_and_one_memory(service: MemoryService) -> None:
    first = await service.remember("local", COFFEE, idempotency_key="k-1")
    second = await service.remember("local", COFFEE, idempotency_key="k-1", wait_ms=5000)
    assert first.replayed is False
    assert second.replayed is True
    assert second.job.id == first.job.id
    assert second.job.status == "done"
    path = service.settings.db_path
    assert count(path, "SELECT COUNT(*) FROM remember_jobs") == 1
    assert count(path, "SELECT COUNT(*) FROM memories") == 1
    assert count(path, "SELECT occurrences FROM memories") == 0


async def test_same_key_with_other_text_is_refused_and_names_the_key(service: MemoryService) -> None:
    await service.remember("local", COFFEE, idempotency_key="order-42")
    with pytest.raises(IdempotencyKeyReused) as caught:
        await service.remember("local", "User prefers green tea", idempotency_key="order-42")
    assert "order-42" in str(caught.value)
    path = service.settings.db_path
    assert count(path, "SELECT COUNT(*) FROM remember_jobs") == 1
    assert rows(path, "SELECT text FROM remember_jobs") == [(COFFEE,)]


async def test_same_key_same_text_in_another_namespace_is_refused(service: MemoryService) -> None:
    await service.remember("local", COFFEE, namespace="work", idempotency_key="k-ns")
    with pytest.raises(IdempotencyKeyReused) as caught:
        await service.remember("local", COFFEE, namespace="home", idempotency_key="k-ns")
    assert "k-ns" in str(caught.value)
    assert "namespace" in str(caught.value)
    path = service.settings.db_path
    assert rows(path, "SELECT namespace FROM remember_jobs") == [("work",)]


async def test_owners_use_the_same_key_independently(service: MemoryService) -> None:
    alice = await service.remember("alice", COFFEE, idempotency_key="shared-key", wait_ms=5000)
    bob = await service.remember("bob", "Bob likes tea", idempotency_key="shared-key", wait_ms=5000)
    assert alice.replayed is False and bob.replayed is False
    assert alice.job.id != bob.job.id
    assert bob.job.text == "Bob likes tea"
    assert alice.job.status == bob.job.status == "done"
    path = service.settings.db_path
    assert sorted(rows(path, "SELECT owner, text FROM remember_jobs")) == [("alice", COFFEE), ("bob", "Bob likes tea")]
    assert count(path, "SELECT COUNT(*) FROM memories") == 2
    # A replay by each owner still finds that owner's own job.
    again = await service.remember("bob", "Bob likes tea", idempotency_key="shared-key")
    assert again.replayed is True and again.job.id == bob.job.id


async def test_twenty_concurrent_remembers_with_one_key_make_one_job(service: MemoryService) -> None:
    outcomes = []

    async def send() -> None:
        outcomes.append(await service.remember("local", COFFEE, idempotency_key="burst"))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(send)

    assert len(outcomes) == 20
    assert len({o.job.id for o in outcomes}) == 1
    assert sum(not o.replayed for o in outcomes) == 1
    done = await service.status("local", [outcomes[0].job.id], wait_ms=5000)
    assert done[0].status == "done"
    path = service.settings.db_path
    assert count(path, "SELECT COUNT(*) FROM remember_jobs") == 1
    assert count(path, "SELECT COUNT(*) FROM memories") == 1


async def test_two_services_on_one_file_share_idempotency(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    one = MemoryService(make_settings(), embedder=embedder)
    two = MemoryService(make_settings(), embedder=embedder)
    keys = [f"key-{i}" for i in range(8)]
    outcomes: dict[str, list] = {key: [] for key in keys}
    async with one.running(), two.running():

        async def send(svc: MemoryService, key: str) -> None:
            outcomes[key].append(await svc.remember("local", f"Fact for {key}", idempotency_key=key))

        async with anyio.create_task_group() as tg:
            for key in keys:
                tg.start_soon(send, one, key)
                tg.start_soon(send, two, key)

        for key in keys:
            pair = outcomes[key]
            assert len(pair) == 2
            assert pair[0].job.id == pair[1].job.id, key
            assert sorted(o.replayed for o in pair) == [False, True], key
        job_ids = [outcomes[key][0].job.id for key in keys]
        finished = await one.status("local", job_ids, wait_ms=10000)
        assert all(job.status == "done" for job in finished)

    path = one.settings.db_path
    assert count(path, "SELECT COUNT(*) FROM remember_jobs") == len(keys)
    assert count(path, "SELECT COUNT(*) FROM memories") == len(keys)
    assert count(path, "SELECT COUNT(DISTINCT idempotency_key) FROM remember_jobs") == len(keys)


async def test_without_a_key_every_call_is_its_own_job_folded_by_curation(service: MemoryService) -> None:
    outcomes = [await service.remember("local", COFFEE) for _ in range(5)]
    ids = [o.job.id for o in outcomes]
    assert len(set(ids)) == 5
    assert not any(o.replayed for o in outcomes)
    jobs = await service.status("local", ids, wait_ms=5000)
    assert [job.status for job in jobs] == ["done"] * 5
    assert sorted(job.decision for job in jobs) == ["created"] + ["occurrence"] * 4
    assert jobs[0].decision == "created"  # arrival order: the first one creates
    assert len({job.memory_id for job in jobs}) == 1
    path = service.settings.db_path
    assert count(path, "SELECT COUNT(*) FROM remember_jobs") == 5
    assert rows(path, "SELECT id, occurrences FROM memories") == [(jobs[0].memory_id, 4)]


async def test_normalized_variants_fold_into_one_memory(service: MemoryService) -> None:
    variants = [COFFEE, "  user PREFERS dark   roast coffee\n", "User prefers dark roast coffee"]
    outcomes = [await service.remember("local", text) for text in variants]
    jobs = await service.status("local", [o.job.id for o in outcomes], wait_ms=5000)
    assert [job.decision for job in jobs] == ["created", "occurrence", "occurrence"]
    # Each occurrence keeps its own text in the journal.
    path = service.settings.db_path
    assert sorted(t for (t,) in rows(path, "SELECT text FROM remember_jobs")) == sorted(variants)
    # A longer statement is a different fact: exact match only.
    longer = await service.remember("local", COFFEE + " in the morning only", wait_ms=5000)
    assert longer.job.decision == "created"
    assert longer.job.memory_id != jobs[0].memory_id


# --- remember_status ---------------------------------------------------------


async def test_status_reports_queued_while_nothing_curates(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running(worker=False):
        job_id = (await svc.remember("local", COFFEE)).job.id
        started = time.monotonic()
        [job] = await svc.status("local", [job_id], wait_ms=300)
        waited = time.monotonic() - started
    assert job.status == "queued"
    assert job.decision is None and job.memory_id is None and job.error is None
    assert 0.25 <= waited < 2.0  # waited out its wait_ms, then reported queued


async def test_status_reports_done_with_decision_and_memory(service: MemoryService) -> None:
    first = await service.remember("local", COFFEE)
    second = await service.remember("local", COFFEE)
    jobs = await service.status("local", [second.job.id, first.job.id], wait_ms=5000)
    assert [job.id for job in jobs] == [second.job.id, first.job.id]  # the order asked
    assert [job.decision for job in jobs] == ["occurrence", "created"]
    assert jobs[0].memory_id == jobs[1].memory_id is not None


async def test_status_reports_failed_with_the_error(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(curation={"max_attempts": 1}), embedder=PoisonEmbedder(embedder))
    async with svc.running():
        outcome = await svc.remember("local", "POISON: this one cannot be embedded", wait_ms=5000)
        [job] = await svc.status("local", [outcome.job.id])
    assert outcome.job.status == "failed"
    assert job.status == "failed"
    assert job.memory_id is None
    assert job.attempts == 1
    assert job.error is not None and "embedding failed" in job.error and "POISON" in job.error


async def test_status_of_unknown_and_foreign_jobs_look_the_same(service: MemoryService) -> None:
    alice_job = (await service.remember("alice", "Alice's locker code hint is the cat's name")).job.id
    unknown = "j_0123456789abcdef"
    with pytest.raises(NotFound) as missing:
        await service.status("bob", [unknown])
    with pytest.raises(NotFound) as foreign:
        await service.status("bob", [alice_job])
    assert str(missing.value).replace(unknown, "<id>") == str(foreign.value).replace(alice_job, "<id>")
    assert "alice" not in str(foreign.value).lower()
    # Mixed with one of bob's own ids, it is still a plain NotFound.
    bob_job = (await service.remember("bob", "Bob likes tea")).job.id
    with pytest.raises(NotFound) as mixed:
        await service.status("bob", [bob_job, alice_job])
    assert str(mixed.value) == str(foreign.value)
    # The owner herself sees it.
    [job] = await service.status("alice", [alice_job], wait_ms=5000)
    assert job.status == "done"


async def test_status_wait_returns_when_another_process_curates(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    """wait_ms waits for completion, even when the curating worker belongs to another service."""
    waiter = MemoryService(make_settings(), embedder=embedder)
    curator = MemoryService(make_settings(), embedder=embedder)
    async with waiter.running(worker=False):
        job_id = (await waiter.remember("local", COFFEE)).job.id
        result: list = []

        async def wait_for_it() -> None:
            started = time.monotonic()
            result.extend(await waiter.status("local", [job_id], wait_ms=10000))
            result.append(time.monotonic() - started)

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_for_it)
            await anyio.sleep(0.3)
            assert not result  # still waiting: nothing has curated the job yet
            async with curator.running():
                with anyio.fail_after(8):
                    while not result:
                        await anyio.sleep(0.02)
    job, waited = result
    assert job.status == "done" and job.decision == "created"
    assert 0.3 <= waited < 8


# --- curation disabled -------------------------------------------------------


async def test_curation_disabled_keeps_every_row_and_recall_collapses(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(curation={"enabled": False}), embedder=embedder)
    async with svc.running():
        ids = [(await svc.remember("local", COFFEE)).job.id for _ in range(5)]
        ids += [(await svc.remember("local", text)).job.id for text in OTHERS]
        jobs = await svc.status("local", ids, wait_ms=5000)
        assert [job.decision for job in jobs] == ["created"] * 9
        path = svc.settings.db_path
        assert count(path, "SELECT COUNT(*) FROM memories WHERE body = ?", COFFEE) == 5
        assert count(path, "SELECT SUM(occurrences) FROM memories") == 0

        result = await svc.recall("local", "coffee", limit=5, min_score=0)  # min_score=0: unrelated facts too
    texts = [hit.text for hit in result.hits]
    assert texts[0] == COFFEE
    assert texts.count(COFFEE) == 1
    assert result.hits[0].copies == 4
    assert len(texts) == 5 and set(texts) == {COFFEE, *OTHERS}
    assert result.collapsed == 4
    assert "(4 duplicate copies of the above collapsed" in recall_text(result)
