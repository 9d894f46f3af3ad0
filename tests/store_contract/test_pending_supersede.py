"""A correction still queued hides what it replaces (issue 19): while a remember job naming a
memory in `supersedes` waits for curation, recall and list treat that memory as superseded
already -- hidden, or with include_superseded shown marked by the job -- and once the job fails
for good it is back. Each read the store answers, and a recall over the real search on top."""

from __future__ import annotations

import numpy as np

from memwal_mcp.normalize import norm_key
from memwal_mcp.recall.search import SearchParams, search
from memwal_mcp.records import Hit, Job
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import JobRequest

from .helpers import T0, Stored, prepare_vectors, remember, unit_vectors

OLD = "The API timeout is 30 seconds"
NEW = "The API timeout is 42 seconds"
OTHER = "Deploys go out on Fridays"


def _file(w: StoreWriter) -> tuple[Stored, Stored, Job]:
    """An old fact, an unrelated one, and a correction of the old one filed but not curated."""
    prepare_vectors(w)
    vectors = unit_vectors(np.random.default_rng(19), 2)
    old = remember(w, "alice", "default", OLD, vector=vectors[0])
    other = remember(w, "alice", "default", OTHER, vector=vectors[1], at=T0 + 1)
    ((job, _),) = w.insert_jobs("alice", [JobRequest("default", NEW, supersedes=(old.id,))], T0 + 2)
    return old, other, job


def _listed(r: StoreReader, superseded: bool) -> list[tuple[str, str | None]]:
    return [(m.id, m.superseded_by) for m in r.list_memories("alice", None, None, None, 10, None, superseded)]


async def _recall(store: Store, lane: int, superseded: bool) -> list[Hit]:
    params = SearchParams("alice", "API timeout", 5, mode="lexical", include_superseded=superseded)
    return await search(store, None, [lane], params, pending=True)


async def test_a_queued_correction_hides_the_memory_it_supersedes_until_it_fails(store: Store) -> None:
    old, other, job = await store.write(_file)

    # Before the fix, list and recall gave the old value back, ranked first above the correction.
    assert await store.read(_listed, False) == [(other.id, None)]
    hits = await _recall(store, old.lane, False)
    assert [(h.id, h.pending) for h in hits] == [(job.id, True)], hits

    # Shown when asked for, marked by the job that replaces it, as a superseded memory is.
    assert await store.read(_listed, True) == [(other.id, None), (old.id, job.id)]
    shown = {h.id: h for h in await _recall(store, old.lane, True)}
    assert set(shown) == {job.id, old.id} and shown[old.id].superseded_by == job.id, shown
    rows = await store.read(lambda r: r.memories_by_pk([old.pk, other.pk]))
    assert (rows[old.pk].superseded_by, rows[other.pk].superseded_by) == (job.id, None)

    # A collapse counts only what the recall could show: not the hidden copy, unless asked.
    key = norm_key(OLD)
    assert await store.read(lambda r: r.copies_by_key([old.lane], [key])) == {}
    counted = await store.read(lambda r: r.copies_by_key([old.lane], [key], superseded=True))
    assert counted[key].ids == (old.id,)

    # The job fails for good: the correction will never replace it, so the old fact is back.
    await store.write(lambda w: w.mark_attempt_failed(job.id, "embedding failed", None, T0 + 3))
    assert await store.read(_listed, False) == [(other.id, None), (old.id, None)]
    assert [(h.id, h.superseded_by) for h in await _recall(store, old.lane, False)] == [(old.id, None)]
    assert (await store.read(lambda r: r.copies_by_key([old.lane], [key])))[key].ids == (old.id,)


async def test_only_a_queued_job_hides_and_only_what_it_names_of_its_owner(store: Store) -> None:
    """A job that only failed an attempt (queued again for a retry) still hides its target; a job
    curated since supersedes it for real; another owner's memory of the same text is untouched."""
    old, _, job = await store.write(_file)
    bob = await store.write(lambda w: remember(w, "bob", "default", OLD, at=T0 + 3))
    await store.write(lambda w: w.mark_attempt_failed(job.id, "LLM timed out", T0 + 60, T0 + 3))
    assert old.id not in [m for m, _ in await store.read(_listed, False)]
    bobs = await store.read(lambda r: r.list_memories("bob", None, None, None, 10, None, False))
    assert [(m.id, m.superseded_by) for m in bobs] == [(bob.id, None)]

    def curate(w: StoreWriter) -> str:
        with w.transaction():
            pk, memory_id = w.create_memory(
                owner="alice",
                namespace="default",
                lane=old.lane,
                body=NEW,
                key=norm_key(NEW),
                source_job_id=job.id,
                vector=None,
                model_id=None,
                now=T0 + 4,
            )
            w.mark_done(job.id, "created", memory_id, T0 + 4)
        return memory_id

    new = await store.write(curate)
    listed = await store.read(_listed, True)
    assert (old.id, new) in listed and (new, None) in listed, listed


async def test_forgetting_a_queued_correction_says_what_is_live_again(store: Store) -> None:
    """The correction hid the old fact; erased before it was curated, it gives it back and says
    so, as a forget of a curated correction does. A forget --query lists the hidden copy marked
    by the job, as recall marks it."""
    old, _, job = await store.write(_file)
    copies = await store.read(lambda r: r.copies_of("alice", [old.lane], [norm_key(OLD)]))
    assert [(c.id, c.superseded_by) for c in copies] == [(old.id, job.id)]
    done = await store.write(lambda w: w.forget_memory("alice", job.id))
    assert (done.memory_ids, done.via_job, done.restored) == ((), job.id, (old.id,))
    assert (old.id, None) in await store.read(_listed, False)
    copies = await store.read(lambda r: r.copies_of("alice", [old.lane], [norm_key(OLD)]))
    assert [(c.id, c.superseded_by) for c in copies] == [(old.id, None)]


async def test_forgetting_a_failed_correction_brings_nothing_back_it_did_not_hide(store: Store) -> None:
    old, _, job = await store.write(_file)
    await store.write(lambda w: w.mark_attempt_failed(job.id, "embedding failed", None, T0 + 3))
    done = await store.write(lambda w: w.forget_memory("alice", job.id))
    assert (done.via_job, done.restored) == (job.id, ())
    assert (old.id, None) in await store.read(_listed, False)
