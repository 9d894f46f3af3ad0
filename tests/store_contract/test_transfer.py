"""Export and import: every record read back with iter_* and written with import_rows into
a fresh store gives a store whose iter_* answers the same; importing again adds nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

import numpy as np
import pytest

from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import KINDS, ImportRow, JobRequest, RecordRefused

from .helpers import T0, Exported, Stored, everything, lane_of, prepare_vectors, remember, unit_vectors


def _history(w: StoreWriter) -> None:
    """Two owners; jobs created, repeated, merged, failed, queued; a merge with a revision, a
    memory retired into another, and a forgotten one."""
    prepare_vectors(w)
    vectors = unit_vectors(np.random.default_rng(21), 4)
    tea = remember(w, "alice", "default", "Tea at four", vector=vectors[0], key="k-tea", occurred_at=T0 - 86400)
    # With an expiry: the merge's revision keeps it (undo gives it back), and so must an import.
    rack = remember(w, "alice", "work", "Alpha server in rack 12", vector=vectors[1], at=T0 + 1, expires_at=T0 + 9999)
    beta = remember(w, "alice", "work", "Beta server in rack 12", vector=vectors[2], at=T0 + 2)
    secret = remember(w, "alice", "default", "Vault code 4417", at=T0 + 3)
    remember(w, "bob", "default", "Bob takes the 8:15 train", vector=vectors[3], at=T0 + 4)

    repeat, _ = w.insert_job("alice", "default", "tea at FOUR", None, T0 + 5)
    merge, _ = w.insert_job("alice", "work", "Alpha and beta share rack 12", None, T0 + 6)
    merged = "Alpha and beta servers are in rack 12"
    with w.transaction():
        w.add_occurrence(tea.pk, T0 + 5)
        w.mark_done(repeat.id, "occurrence", tea.id, T0 + 5)
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
            now=T0 + 6,
        )
        w.retire(beta.pk, rack.id, T0 + 6)
        w.mark_done(merge.id, "consolidated", rack.id, T0 + 6)
    failed, _ = w.insert_job("alice", "default", "A job that kept failing", None, T0 + 7)
    w.mark_attempt_failed(failed.id, "ValueError: bad", None, T0 + 8)
    w.insert_job("alice", "default", "Still waiting for curation", "k-queued", T0 + 9)
    w.forget_memory("alice", secret.id)


def _rows(records: Exported) -> list[tuple[int, ImportRow]]:
    return list(enumerate(records.rows(), start=1))


@pytest.fixture
async def source(store: Store) -> Exported:
    await store.write(_history)
    return await store.read(everything)


async def test_the_history_exports_every_kind(store: Store, source: Exported) -> None:
    assert [len(rows) for rows in source.kinds()] == [3, 9, 4, 1, 1]
    counts = await store.read(lambda r: r.export_counts(None))
    assert counts == dict(zip(KINDS, (3, 9, 4, 1, 1)))
    assert await store.read(lambda r: r.exported_owners(None)) == ["alice", "bob"]
    statuses = {m.body: m.status for m in source.memories}
    assert statuses["Beta server in rack 12"] == "retired"
    assert [r.expires_at for r in source.revisions] == [T0 + 9999]


async def test_an_import_gives_back_the_same_records(
    source: Exported, make_store: Callable[[], Awaitable[Store]]
) -> None:
    target = await make_store()
    outcome = await target.write(lambda w: w.import_rows(_rows(source)))
    assert outcome.to_forget == [] and outcome.skipped == {}
    assert outcome.added == {"lane": 3, "job": 9, "memory": 4, "revision": 1, "tombstone": 1}
    assert await target.read(everything) == source
    for owner in ("alice", "bob"):
        assert await target.read(everything, owner) == source.of(owner)


async def test_imported_memories_are_searchable_and_idempotent(
    source: Exported, make_store: Callable[[], Awaitable[Store]]
) -> None:
    target = await make_store()
    await target.write(lambda w: w.import_rows(_rows(source)))
    again = await target.write(lambda w: w.import_rows(_rows(source)))
    assert sum(again.added.values()) == 0
    assert sum(again.skipped.values()) == len(source.rows())
    assert await target.read(everything) == source

    lane = await target.read(lane_of, "alice", "work")
    found, _ = await target.read(lambda r: r.text_search([lane], ["rack"], 10))
    merged = next(m for m in source.memories if m.body.startswith("Alpha and beta"))
    hit = await target.read(lambda r: r.memories_by_pk([m.pk for m in found]))
    assert [row.id for row in hit.values()] == [merged.id]  # the retired memory left the index
    # The repeat recorded on "Tea at four" is still counted as one, not twice.
    key = norm_key("Tea at four")
    home = await target.read(lane_of, "alice", "default")
    copies = (await target.read(lambda r: r.copies_by_key([home], [key])))[key]
    assert (copies.rows, copies.occurrences) == (1, 1)
    # The key of the job still queued names the same event in the copy.
    job, replayed = await target.write(lambda w: w.insert_job("alice", "default", "Still waiting", "k-queued", T0))
    assert replayed and job.text == "Still waiting for curation"


async def test_a_refused_import_stores_nothing(source: Exported, make_store: Callable[[], Awaitable[Store]]) -> None:
    """A revision that names no memory in the file or the store: the whole import rolls back."""
    target = await make_store()
    without_memories = dataclasses.replace(source, memories=[])
    with pytest.raises(RecordRefused):
        await target.write(lambda w: w.import_rows(_rows(without_memories)))
    assert await target.read(everything) == Exported()


# --- a job's supersedes names memories of its owner -------------------------------------------


def _replace(w: StoreWriter, old: Stored, text: str, at: float) -> Stored:
    """File a fact that supersedes `old` and curate it into a new memory, as the worker does."""
    ((job, _),) = w.insert_jobs(old.job.owner, [JobRequest(old.job.namespace, text, supersedes=(old.id,))], at)
    with w.transaction():
        pk, memory_id = w.create_memory(
            owner=old.job.owner,
            namespace=old.job.namespace,
            lane=old.lane,
            body=text,
            key=norm_key(text),
            source_job_id=job.id,
            vector=None,
            model_id=None,
            now=at,
            created_at=at,
        )
        w.mark_done(job.id, "created", memory_id, at)
    return Stored(pk, memory_id, job, old.lane)


def _superseding(w: StoreWriter) -> None:
    """alice: a fact replaced, and its replacement replaced in turn (a chain); bob: one memory."""
    floor3 = remember(w, "alice", "default", "The office is on floor 3")
    floor5 = _replace(w, floor3, "The office moved to floor 5", T0 + 1)
    _replace(w, floor5, "The office moved to floor 7", T0 + 2)
    remember(w, "bob", "default", "Bob's desk is by the door", at=T0 + 3)


@pytest.mark.parametrize("named", ["an unknown id", "bob's memory in the file", "bob's memory in the store"])
async def test_a_job_superseding_no_memory_of_its_owner_is_refused_whole(
    named: str, make_store: Callable[[], Awaitable[Store]]
) -> None:
    source = await make_store()
    await source.write(_superseding)
    exported = await source.read(everything)
    (bobs,) = [m.id for m in exported.memories if m.owner == "bob"]
    target = await make_store()
    file = exported
    if named == "bob's memory in the store":
        await target.write(lambda w: w.import_rows(_rows(exported.of("bob"))))
        file = exported.of("alice")
    before = await target.read(everything)
    wrong = "m_0000000000000000" if named == "an unknown id" else bobs
    replacing = next(job for job in file.jobs if job.supersedes)
    jobs = [dataclasses.replace(job, supersedes=(wrong,)) if job is replacing else job for job in file.jobs]

    with pytest.raises(RecordRefused) as refused:
        await target.write(lambda w: w.import_rows(_rows(dataclasses.replace(file, jobs=jobs))))
    assert refused.value.line == 1 + len(file.lanes) + file.jobs.index(replacing)
    assert replacing.id in refused.value.reason and wrong in refused.value.reason, refused.value.reason
    assert await target.read(everything) == before

    # The file as exported imports whole: the chain of replacements and its links come back.
    await target.write(lambda w: w.import_rows(_rows(file)))
    for owner in ("alice", "bob"):
        assert await target.read(everything, owner) == exported.of(owner)
    # A later job may name a memory that only the store holds.
    (live,) = [m for m in exported.memories if m.owner == "alice" and m.status == "live"]
    later = dataclasses.replace(replacing, id="j_00000000000000ff", supersedes=(live.id,), memory_id=None)
    later = dataclasses.replace(later, status="queued", decision=None, idempotency_key=None)
    outcome = await target.write(lambda w: w.import_rows([(1, later)]))
    assert outcome.added == {"job": 1}
