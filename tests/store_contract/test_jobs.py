"""The journal: every remember is a job, and an idempotency key names one job per owner."""

from __future__ import annotations

import asyncio

from memwal_mcp.store import Store

from .helpers import T0


async def test_insert_job_files_a_new_queued_job(store: Store) -> None:
    job, replayed = await store.write(
        lambda w: w.insert_job("alice", "work", "Deploys go out on Fridays", "k-1", T0, T0 - 3600)
    )
    assert not replayed
    assert job.id.startswith("j_")
    assert (job.owner, job.namespace, job.text, job.idempotency_key) == (
        "alice",
        "work",
        "Deploys go out on Fridays",
        "k-1",
    )
    assert (job.status, job.attempts, job.decision, job.memory_id, job.error) == ("queued", 0, None, None, None)
    assert (job.created_at, job.occurred_at) == (T0, T0 - 3600)
    assert await store.read(lambda r: r.jobs_by_id("alice", [job.id])) == {job.id: job}
    assert [lane.namespace for lane in await store.read(lambda r: r.owner_lanes("alice"))] == ["work"]


async def test_the_same_key_returns_the_earlier_job(store: Store) -> None:
    first, _ = await store.write(lambda w: w.insert_job("alice", "default", "Tea at four", "k-tea", T0))
    again, replayed = await store.write(lambda w: w.insert_job("alice", "default", "Tea at four", "k-tea", T0 + 5))
    assert replayed and again == first
    assert [job.id for job in await store.read(lambda r: list(r.iter_jobs("alice")))] == [first.id]


async def test_the_same_key_with_other_text_replays_the_earlier_job(store: Store) -> None:
    """The store does not compare texts: it hands back the job the key names, and the service
    turns a different text, namespace or date into IdempotencyKeyReused."""
    first, _ = await store.write(lambda w: w.insert_job("alice", "default", "Tea at four", "k-tea", T0))
    other, replayed = await store.write(
        lambda w: w.insert_job("alice", "elsewhere", "Coffee at nine", "k-tea", T0 + 5, T0)
    )
    assert replayed and other == first
    assert other.text == "Tea at four" and other.namespace == "default" and other.occurred_at is None
    assert len(await store.read(lambda r: list(r.iter_jobs(None)))) == 1


async def test_the_same_key_for_another_owner_is_another_job(store: Store) -> None:
    alice, alice_replayed = await store.write(lambda w: w.insert_job("alice", "default", "Tea", "shared-key", T0))
    bob, bob_replayed = await store.write(lambda w: w.insert_job("bob", "default", "Tea", "shared-key", T0))
    assert not alice_replayed and not bob_replayed
    assert alice.id != bob.id and (alice.owner, bob.owner) == ("alice", "bob")
    assert await store.read(lambda r: r.jobs_by_id("bob", [alice.id])) == {}


async def test_without_a_key_every_call_is_its_own_job(store: Store) -> None:
    results = [await store.write(lambda w: w.insert_job("alice", "default", "Tea", None, T0)) for _ in range(3)]
    assert [replayed for _, replayed in results] == [False] * 3
    assert len({job.id for job, _ in results}) == 3


async def test_concurrent_inserts_of_one_key_make_one_job(store: Store) -> None:
    results = await asyncio.gather(
        *(store.write(lambda w: w.insert_job("alice", "default", "Tea at four", "k-race", T0)) for _ in range(20))
    )
    assert len({job.id for job, _ in results}) == 1
    assert sorted(replayed for _, replayed in results) == [False] + [True] * 19
    assert len(await store.read(lambda r: list(r.iter_jobs("alice")))) == 1
    counts = await store.read(lambda r: r.queue_counts())
    assert counts.get("queued") == 1 and sum(counts.values()) == 1
