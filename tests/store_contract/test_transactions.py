"""transaction() is all or nothing; a savepoint() inside one rolls back only its own part,
as curation relies on: one failing job must not undo the jobs curated beside it."""

from __future__ import annotations

import pytest

from memwal_mcp.records import Job
from memwal_mcp.store import Store, StoreReader, StoreWriter

from .helpers import T0, Exported, curate_created, everything, lane_of, owner_totals


class Boom(Exception):
    pass


async def _file(store: Store, *texts: str) -> list[Job]:
    return [(await store.write(lambda w: w.insert_job("alice", "default", text, None, T0)))[0] for text in texts]


def _state(r: StoreReader) -> tuple[Exported, dict[str, int], tuple[int, int]]:
    return everything(r), r.counters(), owner_totals(r, "alice")


async def test_a_failed_transaction_writes_nothing(store: Store) -> None:
    (job,) = await _file(store, "Tea at four")
    before = await store.read(_state)

    def fail(w: StoreWriter) -> None:
        with w.transaction():
            curate_created(w, job, T0 + 1)
            raise Boom

    with pytest.raises(Boom):
        await store.write(fail)
    assert await store.read(_state) == before
    assert await store.read(lambda r: r.still_queued([job.id])) == {job.id}
    assert await store.read(lambda r: r.text_search([lane_of(r, "alice", "default")], ["tea"], 5)) == ([], True)


async def test_a_transaction_commits_what_it_wrote(store: Store) -> None:
    (job,) = await _file(store, "Tea at four")

    def curate(w: StoreWriter) -> str:
        with w.transaction():
            return curate_created(w, job, T0 + 1)

    memory_id = await store.write(curate)
    found = await store.read(lambda r: r.memory_by_id("alice", memory_id))
    assert found is not None and found[0].body == "Tea at four"
    assert await store.read(lambda r: r.counters()) == {"curation_created": 1}


async def test_a_failed_savepoint_rolls_back_its_part_only(store: Store) -> None:
    first, failing, last = await _file(store, "Tea at four", "Coffee at nine", "Cake on Fridays")

    def batch(w: StoreWriter) -> list[str]:
        kept = []
        with w.transaction():
            for job in (first, failing, last):
                try:
                    with w.savepoint():
                        memory_id = curate_created(w, job, T0 + 1)
                        if job is failing:
                            raise Boom
                    kept.append(memory_id)
                except Boom:
                    w.mark_attempt_failed(job.id, "Boom", T0 + 60, T0 + 1)
        return kept

    kept = await store.write(batch)
    listed = await store.read(lambda r: r.list_memories("alice", None, None, None, 10))
    assert sorted(row.id for row in listed) == sorted(kept) and len(kept) == 2
    assert {row.body for row in listed} == {"Tea at four", "Cake on Fridays"}
    jobs = await store.read(lambda r: r.jobs_by_id("alice", [first.id, failing.id, last.id]))
    assert [jobs[j.id].status for j in (first, failing, last)] == ["done", "queued", "done"]
    assert (jobs[failing.id].attempts, jobs[failing.id].error) == (1, "Boom")
    assert await store.read(lambda r: r.counters()) == {"curation_created": 2}
    lane = await store.read(lane_of, "alice", "default")
    assert await store.read(lambda r: r.text_search([lane], ["coffee"], 5)) == ([], True)
    assert await store.read(lambda r: owner_totals(r, "alice")) == (2, len("Tea at four") + len("Cake on Fridays"))


async def test_a_savepoint_that_succeeds_commits_with_its_transaction(store: Store) -> None:
    (job,) = await _file(store, "Tea at four")

    def curate_then_fail(w: StoreWriter) -> None:
        with w.transaction():
            with w.savepoint():
                curate_created(w, job, T0 + 1)
            raise Boom  # after the savepoint: the whole transaction goes

    before = await store.read(_state)
    with pytest.raises(Boom):
        await store.write(curate_then_fail)
    assert await store.read(_state) == before
