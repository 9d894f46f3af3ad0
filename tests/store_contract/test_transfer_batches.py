"""A migration's batches (transfer/batches.py) over the store contract: each batch is whole
reference groups, so the batches import one transaction at a time, in order, each leaving a
store that `check` passes (a migration killed between any two stops there), the last leaving
what one import of everything leaves; importing them all again adds nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np

from memwal_mcp.normalize import norm_key
from memwal_mcp.records import Job
from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import ImportRow, JobRequest, LaneRow, MemoryRecord, RevisionRow, TombstoneRow
from memwal_mcp.transfer.batches import Records, batches

from .helpers import T0, everything, prepare_vectors, remember, unit_vectors


def _history(w: StoreWriter) -> None:
    """Two owners. alice: a supersede chain of three, a memory with two repeats, a merge (with
    its revision and the memory retired into it), a forgotten memory, a queued job, loners, and a
    lane whose only memory is forgotten; bob: two loners."""
    prepare_vectors(w)
    vectors = unit_vectors(np.random.default_rng(8), 12)
    v1 = remember(w, "alice", "default", "Office moves to Lisbon", vector=vectors[0], at=T0)
    v2 = remember(w, "alice", "default", "Office moves to Porto", vector=vectors[1], at=T0 + 1, supersedes=[v1.id])
    remember(w, "alice", "default", "Office moves to Oslo", vector=vectors[2], at=T0 + 2, supersedes=[v2.id])
    tea = remember(w, "alice", "default", "Tea at four", vector=vectors[3], at=T0 + 3)
    for i in (4, 5):
        job, _ = w.insert_job("alice", "default", "tea at FOUR", None, T0 + i)
        with w.transaction():
            w.add_occurrence(tea.pk, T0 + i)
            w.mark_done(job.id, "occurrence", tea.id, T0 + i)
    rack = remember(w, "alice", "work", "Alpha server in rack 12", vector=vectors[4], at=T0 + 6)
    beta = remember(w, "alice", "work", "Beta server in rack 12", vector=vectors[5], at=T0 + 7)
    merge, _ = w.insert_job("alice", "work", "Alpha and beta share rack 12", None, T0 + 8)
    merged = "Alpha and beta servers are in rack 12"
    with w.transaction():
        w.replace_body(
            pk=rack.pk,
            lane=rack.lane,
            body=merged,
            key=norm_key(merged),
            vector=None,
            model_id=None,
            decision="consolidated",
            job_id=merge.id,
            llm_model="test-llm",
            guard="pass",
            merged_ids=[beta.id],
            now=T0 + 8,
        )
        w.retire(beta.pk, rack.id, T0 + 8)
        w.mark_done(merge.id, "consolidated", rack.id, T0 + 8)
    secret = remember(w, "alice", "default", "Vault code 4417", at=T0 + 9)
    w.forget_memory("alice", secret.id)
    gone = remember(w, "alice", "private", "Only fact of a lane", at=T0 + 10)
    w.forget_memory("alice", gone.id)
    for i in range(6):
        remember(w, "alice", "default", f"Loner fact number {i}", vector=vectors[6 + i], at=T0 + 11 + i)
    w.insert_jobs("alice", [JobRequest("default", "Still waiting for curation")], T0 + 20)
    remember(w, "bob", "default", "Bob takes the 8:15 train", at=T0 + 21)
    remember(w, "bob", "default", "Bob likes rye bread", at=T0 + 22)


def _records(store_rows: list[ImportRow], owner: str) -> Records:
    out = Records()
    for row in store_rows:
        if row.owner != owner:
            continue
        if isinstance(row, LaneRow):
            out.lanes.append(row)
        elif isinstance(row, Job):
            out.jobs.append(row)
        elif isinstance(row, MemoryRecord):
            out.memories.append(row)
        elif isinstance(row, RevisionRow):
            out.revisions.append(row)
        elif isinstance(row, TombstoneRow):
            out.tombstones.append(row)
    return out


async def _source(make_store: Callable[[], Awaitable[Store]]) -> tuple[Store, dict[str, Records]]:
    source = await make_store()
    await source.write(_history)
    exported = await source.read(everything)
    rows = exported.rows()
    return source, {owner: _records(rows, owner) for owner in ("alice", "bob")}


async def test_each_batch_imports_alone_and_leaves_a_clean_store(
    make_store: Callable[[], Awaitable[Store]],
) -> None:
    source, records = await _source(make_store)
    target = await make_store()
    parts = [part for owner in records for part in batches(records[owner], size=3)]
    assert len(parts) > 6  # small batches: the scenario is cut many times
    for part in parts:
        outcome = await target.write(lambda w: w.import_rows(enumerate(part, start=1)))
        assert not outcome.skipped and not outcome.to_forget
        problems, _ = await target.read(lambda r: r.check())
        assert [p for p in problems if p.severity == "error"] == []
    assert await target.read(everything) == await source.read(everything)
    again = [await target.write(lambda w: w.import_rows(enumerate(part, start=1))) for part in parts]
    assert all(not outcome.added for outcome in again)
    # Writes after an import keep the lanes' totals and word counts as before (an import may
    # keep them its own way within its transaction).
    await target.write(lambda w: remember(w, "alice", "default", "Tea is served after the import", at=T0 + 50))
    await target.write(lambda w: w.forget_memory("alice", records["alice"].memories[-1].id))
    problems, _ = await target.read(lambda r: r.check())
    assert [p for p in problems if p.severity == "error"] == []


def test_linked_records_share_a_batch_and_small_groups_pack_together() -> None:
    def job(job_id: str, memory_id: str | None, supersedes: tuple[str, ...] = ()) -> Job:
        return Job(
            job_id, "alice", "default", "x", None, "done", 1, "created", memory_id, None, T0, T0, None, None, supersedes
        )

    def memory(memory_id: str, source: str, superseded_by: str | None = None) -> MemoryRecord:
        status = "retired" if superseded_by else "live"
        return MemoryRecord(
            memory_id, "alice", "default", "x", status, None, source, 1, None, T0, T0, None, superseded_by
        )

    records = Records(
        lanes=[LaneRow("alice", "default")],
        # m1 <- j1; m2 <- j2 (supersedes m1); six repeats of m3; two loners
        jobs=[
            job("j1", "m1"),
            job("j2", "m2", ("m1",)),
            *(job(f"r{i}", "m3") for i in range(6)),
            job("j3", "m3"),
            job("j4", "m4"),
            job("j5", "m5"),
        ],
        memories=[
            memory("m1", "j1", superseded_by="m2"),
            memory("m2", "j2"),
            memory("m3", "j3"),
            memory("m4", "j4"),
            memory("m5", "j5"),
        ],
    )
    parts = batches(records, size=4)
    ids = [[getattr(row, "id", None) or "lane" for row in part] for part in parts]
    assert ids == [
        ["lane", "j1", "j2", "m1", "m2"],  # the chain (4) and the lane, which goes with the first batch
        ["r0", "r1", "r2", "r3", "r4", "r5", "j3", "m3"],  # larger than a batch: on its own, never split
        ["j4", "j5", "m4", "m5"],  # two loners packed together, in import order (jobs, then memories)
    ]
    assert sorted(len(part) for part in batches(records, size=10_000)) == [len(records)]
