"""Lanes and leases: one worker curates a lane at a time, a dead worker's lane comes back,
and the queue hands out due jobs in the order they arrived."""

from __future__ import annotations

import pytest

from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.leases import lease_holder_id
from memwal_mcp.store.records import JobWithdrawn, Lane

from .helpers import T0, lane_of

LEASE_S = 30.0


@pytest.fixture
def holders() -> tuple[str, str]:
    return lease_holder_id(), lease_holder_id()


async def _file(store: Store, *texts: str, owner: str = "alice", namespace: str = "default") -> list[str]:
    ids = []
    for i, text in enumerate(texts):
        job, _ = await store.write(lambda w: w.insert_job(owner, namespace, text, None, T0 + i * 0.001))
        ids.append(job.id)
    return ids


async def test_a_lane_with_due_jobs_is_claimed(store: Store, holders: tuple[str, str]) -> None:
    a, _ = holders
    assert await store.write(lambda w: w.claim_lane(a, LEASE_S, T0)) is None  # nothing queued anywhere
    await _file(store, "Tea at four", namespace="work")
    assert await store.read(lambda r: r.has_due_jobs(T0 + 1))
    lane = await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1))
    assert lane == Lane(await store.read(lane_of, "alice", "work"), "alice", "work")


async def test_a_running_lease_keeps_other_holders_out(store: Store, holders: tuple[str, str]) -> None:
    a, b = holders
    await _file(store, "Tea at four")
    assert await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1)) is not None
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 2)) is None
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + LEASE_S - 1)) is None


async def test_two_holders_curate_two_lanes_side_by_side(store: Store, holders: tuple[str, str]) -> None:
    a, b = holders
    await _file(store, "Tea at four", namespace="one")
    await _file(store, "Coffee at nine", namespace="two")
    first = await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1))
    second = await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 1))
    assert first is not None and second is not None
    assert {first.namespace, second.namespace} == {"one", "two"}


async def test_only_the_holder_renews(store: Store, holders: tuple[str, str]) -> None:
    a, b = holders
    await _file(store, "Tea at four")
    lane = await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1))
    assert lane is not None
    assert await store.write(lambda w: w.renew_lease(lane.id, a, T0 + 1 + 10 * LEASE_S))
    assert not await store.write(lambda w: w.renew_lease(lane.id, b, T0 + 1 + 10 * LEASE_S))
    # The renewal holds past the first lease's end; b's attempt changed nothing.
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 2 * LEASE_S)) is None


async def test_an_expired_lease_is_reclaimed_by_another_holder(store: Store, holders: tuple[str, str]) -> None:
    a, b = holders
    await _file(store, "Tea at four")
    lane = await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1))
    assert lane is not None
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 2 + LEASE_S)) == lane
    # The lane is b's now: a's renewal fails, so a stops before writing anything.
    assert not await store.write(lambda w: w.renew_lease(lane.id, a, T0 + 3 + LEASE_S))
    assert await store.write(lambda w: w.renew_lease(lane.id, b, T0 + 3 + 2 * LEASE_S))


async def test_release_frees_the_lane_at_once(store: Store, holders: tuple[str, str]) -> None:
    a, b = holders
    await _file(store, "Tea at four")
    lane = await store.write(lambda w: w.claim_lane(a, LEASE_S, T0 + 1))
    assert lane is not None
    await store.write(lambda w: w.release_lease(lane.id, b))  # not b's to release
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 2)) is None
    await store.write(lambda w: w.release_lease(lane.id, a))
    assert await store.write(lambda w: w.claim_lane(b, LEASE_S, T0 + 2)) == lane


async def test_next_batch_gives_queued_jobs_in_arrival_order(store: Store) -> None:
    ids = await _file(store, *(f"fact number {i}" for i in range(7)))
    await _file(store, "in another namespace", namespace="other")
    lane = await store.read(lane_of, "alice", "default")
    batch = await store.read(lambda r: r.next_batch(lane, 100, T0 + 1))
    assert [job.id for job in batch] == ids
    assert [job.text for job in batch] == [f"fact number {i}" for i in range(7)]
    assert all(job.lane_id == lane and job.attempts == 0 for job in batch)
    assert [job.seq for job in batch] == sorted(job.seq for job in batch)
    first = await store.read(lambda r: r.next_batch(lane, 3, T0 + 1))
    assert [job.id for job in first] == ids[:3]
    rest = await store.read(lambda r: r.next_batch(lane, 100, T0 + 1, first[-1].seq))
    assert [job.id for job in rest] == ids[3:]


async def test_done_jobs_leave_the_queue(store: Store) -> None:
    first, second = await _file(store, "Tea at four", "Coffee at nine")
    lane = await store.read(lane_of, "alice", "default")

    def curate(w: StoreWriter) -> str:
        with w.transaction():
            _, memory_id = w.create_memory(
                owner="alice",
                namespace="default",
                lane=lane,
                body="Tea at four",
                key=norm_key("Tea at four"),
                source_job_id=first,
                vector=None,
                model_id=None,
                now=T0 + 1,
            )
            w.mark_done(first, "created", memory_id, T0 + 1)
        return memory_id

    memory_id = await store.write(curate)
    assert [job.id for job in await store.read(lambda r: r.next_batch(lane, 100, T0 + 2))] == [second]
    done = (await store.read(lambda r: r.jobs_by_id("alice", [first])))[first]
    assert (done.status, done.decision, done.memory_id) == ("done", "created", memory_id)
    assert await store.read(lambda r: r.still_queued([first, second])) == {second}
    await store.write(lambda w: w.mark_done(second, "occurrence", memory_id, T0 + 2))
    assert not await store.read(lambda r: r.has_due_jobs(T0 + 3))
    assert await store.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, T0 + 3)) is None


async def test_a_failed_attempt_waits_for_its_retry(store: Store) -> None:
    (job_id,) = await _file(store, "Tea at four")
    lane = await store.read(lane_of, "alice", "default")
    retry_at = T0 + 60
    await store.write(lambda w: w.mark_attempt_failed(job_id, "EmbeddingError: model busy", retry_at, T0 + 1))
    failed = (await store.read(lambda r: r.jobs_by_id("alice", [job_id])))[job_id]
    assert (failed.status, failed.attempts, failed.error) == ("queued", 1, "EmbeddingError: model busy")
    assert await store.read(lambda r: r.next_batch(lane, 10, T0 + 2)) == []
    assert not await store.read(lambda r: r.has_due_jobs(T0 + 2))
    assert await store.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, T0 + 2)) is None
    # Still queued meanwhile: a recall keeps seeing it as pending.
    assert await store.read(lambda r: r.still_queued([job_id])) == {job_id}
    due = await store.read(lambda r: r.next_batch(lane, 10, retry_at))
    assert [(job.id, job.attempts) for job in due] == [(job_id, 1)]
    assert await store.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, retry_at)) is not None


async def test_a_last_failed_attempt_fails_the_job_for_good(store: Store) -> None:
    (job_id,) = await _file(store, "Tea at four")
    lane = await store.read(lane_of, "alice", "default")
    await store.write(lambda w: w.mark_attempt_failed(job_id, "ValueError: bad", None, T0 + 1))
    failed = (await store.read(lambda r: r.jobs_by_id("alice", [job_id])))[job_id]
    assert (failed.status, failed.attempts, failed.error) == ("failed", 1, "ValueError: bad")
    assert await store.read(lambda r: r.next_batch(lane, 10, T0 + 10**6)) == []
    assert await store.read(lambda r: r.still_queued([job_id])) == set()


async def test_marking_a_job_a_forget_erased_raises_job_withdrawn(store: Store) -> None:
    """A worker read the job, then a forget erased it: what the worker wrote for it must roll
    back with its savepoint, or the forgotten text would come back as a memory."""
    (job_id,) = await _file(store, "Vault code is 4417")
    lane = await store.read(lane_of, "alice", "default")
    (queued,) = await store.read(lambda r: r.next_batch(lane, 10, T0 + 1))
    forgotten = await store.write(lambda w: w.forget_memory("alice", job_id))
    assert forgotten.jobs == 1 and forgotten.via_job == job_id

    def curate(w: StoreWriter) -> None:
        with w.transaction():
            with pytest.raises(JobWithdrawn), w.savepoint():
                _, memory_id = w.create_memory(
                    owner="alice",
                    namespace="default",
                    lane=lane,
                    body=queued.text,
                    key=norm_key(queued.text),
                    source_job_id=queued.id,
                    vector=None,
                    model_id=None,
                    now=T0 + 2,
                )
                w.mark_done(queued.id, "created", memory_id, T0 + 2)

    await store.write(curate)
    assert await store.read(lambda r: r.list_memories("alice", None, None, None, 10)) == []
    assert await store.read(lambda r: r.text_search([lane], ["vault"], 10)) == ([], True)
    job = (await store.read(lambda r: r.jobs_by_id("alice", [job_id])))[job_id]
    assert job.text == "" and job.status != "queued"
