"""Export and import: every record read back with iter_* and written with import_rows into
a fresh store gives a store whose iter_* answers the same; importing again adds nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

import numpy as np
import pytest

from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import KINDS, ImportRow, RecordRefused

from .helpers import T0, Exported, everything, lane_of, prepare_vectors, remember, unit_vectors


def _history(w: StoreWriter) -> None:
    """Two owners; jobs created, repeated, merged, failed, queued; a merge with a revision, a
    memory retired into another, and a forgotten one."""
    prepare_vectors(w)
    vectors = unit_vectors(np.random.default_rng(21), 4)
    tea = remember(w, "alice", "default", "Tea at four", vector=vectors[0], key="k-tea", occurred_at=T0 - 86400)
    rack = remember(w, "alice", "work", "Alpha server in rack 12", vector=vectors[1], at=T0 + 1)
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
