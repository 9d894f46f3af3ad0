"""Move a SQLite file's memory into another store (PostgreSQL): `memwal-mcp migrate --to URL`.

The file is opened read-only (store.open_read_only: its bytes never change; a file of an
older or newer schema is refused) and read in one snapshot. Each owner's records go through
the export/import machinery (store/importing.py, which keeps ids and skips what is present) in
batches of whole reference groups (batches.py), one transaction each: a migration killed at any
instant leaves whole batches behind, and running it again skips them by id and finishes.

Vectors are copied when the file's were made by the configured model; otherwise the moved
memories are embedded again with it (the target's queued jobs are left for its servers to
curate). Tokens keep their revocation state; curation counters and deferred nominations come
along. At the end `check` runs on both stores and every moved owner's records are compared
one by one: the report says "verified", or names what differs.

What it does not do: follow writes made to the file while it runs. Records added meanwhile
are moved by the next run; a record changed after it was moved (a merge, an undo) is not, and
the comparison names it. Stop the servers on the file first.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..config import Settings
from ..errors import EmbeddingError, ImportFormatError
from ..records import Job
from ..service import MemoryService
from ..store import Store, StoreReader, open_read_only
from ..store.records import ImportOutcome, ImportRow, MemoryRecord, RecordRefused, RevisionRow, TokenRow, TombstoneRow
from .batches import BATCH_RECORDS, Records, batches

# Live memories per round of the vector copy.
VECTOR_PAGE = 1000
# Differences named in the report (the rest are counted).
SHOWN = 5


@dataclass(frozen=True)
class _Snapshot:
    """Everything moved, read from the file in one snapshot."""

    owners: dict[str, Records]
    vector_model: tuple[str, int] | None
    tokens: list[TokenRow]
    counters: dict[str, int]
    deferred: list[tuple[str, str, str]]


@dataclass
class MigrationReport:
    source: str
    target: str
    owners: list[str]
    batches: int = 0
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # present already (an earlier run)
    vectors: str = "none"  # copied | re-embedded | none
    vector_count: int = 0
    vector_note: str = ""
    unembedded: int = 0
    tokens: int = 0
    tokens_added: int = 0
    tokens_revoked: int = 0
    deferred_added: int = 0
    source_problems: list[str] = field(default_factory=list)
    target_problems: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # by phase: read, import, vectors, carry, verify

    @property
    def verified(self) -> bool:
        return not (self.source_problems or self.target_problems or self.differences)


def _read(reader: StoreReader) -> _Snapshot:
    with reader.snapshot():
        owners = {
            owner: Records(
                list(reader.iter_lanes(owner)),
                list(reader.iter_jobs(owner)),
                list(reader.iter_memories(owner)),
                list(reader.iter_revisions(owner)),
                list(reader.iter_tombstones(owner)),
            )
            for owner in reader.exported_owners(None)
        }
        return _Snapshot(
            owners, reader.vector_model(), reader.list_tokens(), reader.counters(), reader.deferred_nomination_ids()
        )


async def migrate(
    source_path: Path, target: Settings, *, batch_size: int = BATCH_RECORDS, progress: bool = False
) -> MigrationReport:
    """Move the file at `source_path` into the store `target` names. The file is opened first,
    so one that cannot be moved is refused before the target is touched. No curation worker
    runs on the target: its queued jobs stay queued for its servers."""
    source = open_read_only(source_path)
    await source.open()
    try:
        service = MemoryService(target)
        async with service.running(worker=False):
            return await _migrate(source, service, batch_size, progress)
    finally:
        await source.close()


async def _migrate(source: Store, target: MemoryService, batch_size: int, progress: bool) -> MigrationReport:
    clock = _Clock()
    snap = await source.read(_read)
    clock.lap("read")
    report = MigrationReport(source.location, target.store.location, sorted(snap.owners))
    parts = [(owner, part) for owner, records in snap.owners.items() for part in batches(records, batch_size)]
    report.batches = len(parts)
    added: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    total = sum(len(records) for records in snap.owners.values())
    with tqdm(total=total, desc="migrate", unit="record", file=sys.stderr, disable=not progress) as bar:
        for number, (owner, part) in enumerate(parts, start=1):
            outcome = await _import_batch(target, owner, part, number, len(parts))
            added.update(outcome.added)
            skipped.update(outcome.skipped)
            for who, memory_id in outcome.to_forget:  # forgotten in the file after an earlier run moved it
                await target.forget(who, memory_id, retired_too=True)
            bar.update(len(part))
    report.added, report.skipped = dict(added), dict(skipped)
    clock.lap("import")

    await _vectors(source, target, snap, report)
    clock.lap("vectors")
    report.tokens = len(snap.tokens)
    report.tokens_added, report.tokens_revoked = await target.store.write(lambda w: w.import_tokens(snap.tokens))
    await target.store.write(lambda w: w.merge_counters(snap.counters))
    report.deferred_added = await target.store.write(lambda w: w.import_deferred_nominations(snap.deferred))
    clock.lap("carry")

    report.source_problems = await source.read(_errors)
    report.target_problems = await target.store.read(_errors)
    report.differences = await _compare(source, target.store, report.owners, snap.tokens)
    clock.lap("verify")
    report.seconds = clock.laps
    return report


class _Clock:
    """Seconds spent in each phase, for the report (and the benchmark)."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self._last, 3)
        self._last = now


async def _import_batch(
    target: MemoryService, owner: str, part: list[ImportRow], number: int, of: int
) -> ImportOutcome:
    try:
        return await target.store.write(lambda w: w.import_rows(enumerate(part, start=1)))
    except RecordRefused as exc:
        raise ImportFormatError(
            f"batch {number} of {of} (owner {owner!r}) was refused: {exc.reason}; the batches before it are in"
            f" {target.store.location}, nothing of this one"
        ) from None


# --- vectors -------------------------------------------------------------------


async def _vectors(source: Store, target: MemoryService, snap: _Snapshot, report: MigrationReport) -> None:
    embedding = target.settings.embedding
    owners = report.owners
    if not embedding.enabled:
        report.vector_note = "embeddings are off in the configuration: no vectors (recall scores memories by words)"
    elif snap.vector_model is not None and snap.vector_model[0] == embedding.model:
        copied, note = await _copy_vectors(source, target.store, owners, snap.vector_model)
        report.vectors, report.vector_count, report.vector_note = "copied", copied, note
    if report.vectors == "none" and embedding.enabled:
        made = snap.vector_model[0] if snap.vector_model else None
        why = f"the file's vectors were made by {made!r}" if made else "the file holds no vectors"
        before = await target.store.read(lambda r: r.unembedded_count(owners))
        while await target.worker.embed_backlog():
            pass
        report.unembedded = await target.store.read(lambda r: r.unembedded_count(owners))
        report.vectors, report.vector_count = "re-embedded", max(0, before - report.unembedded)
        report.vector_note = (report.vector_note + "; " if report.vector_note else "") + (
            f"{why}, the configured model is {embedding.model!r}: memories were embedded again with it"
        )
        return
    report.unembedded = await target.store.read(lambda r: r.unembedded_count(owners))


async def _copy_vectors(source: Store, target: Store, owners: Sequence[str], model: tuple[str, int]) -> tuple[int, str]:
    """Each moved live memory's vector from the file, page by page; a memory that has one
    already, or whose body differs from the file's, is left as it is (set_vectors decides)."""
    model_id, dim = model
    try:
        other = await target.write(lambda w: w.ensure_vector_table(model_id, dim))
    except EmbeddingError as exc:
        return 0, f"vectors not copied: {exc}"
    if other:
        return 0, f"the target's vectors were made by {other!r}: the file's ({model_id!r}) were not copied"
    copied = 0
    for owner in owners:
        before: tuple[float, str] | None = None
        while True:
            page = await target.read(lambda r: r.list_memories(owner, None, before, None, VECTOR_PAGE))
            if not page:
                break
            before = (page[-1].created_at, page[-1].id)
            found = await source.read(_source_vectors, owner, [row.id for row in page])
            items = [(row.pk, row.lane, row.body, found[row.id]) for row in page if row.id in found]
            if items:
                copied += await target.write(lambda w: w.set_vectors(items, model_id))
    return copied, ""


def _source_vectors(reader: StoreReader, owner: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
    by_lane: dict[int, dict[int, str]] = {}
    for memory_id in ids:
        found = reader.memory_by_id(owner, memory_id)
        if found is not None and found[1] == "live":
            by_lane.setdefault(found[0].lane, {})[found[0].pk] = memory_id
    vectors: dict[str, np.ndarray] = {}
    for lane, pks in by_lane.items():
        for pk, vector in reader.vectors_of(lane, list(pks)).items():
            vectors[pks[pk]] = vector
    return vectors


# --- verification --------------------------------------------------------------


def _errors(reader: StoreReader) -> list[str]:
    problems, _ = reader.check()
    return [problem.line() for problem in problems if problem.severity == "error"]


def _owner_state(reader: StoreReader, owner: str) -> dict[str, object]:
    """What must be the same on both sides, per kind: every record by its key (a revision has
    no id: the multiset of them), counts from export_counts."""
    with reader.snapshot():
        revisions: Counter[RevisionRow] = Counter(reader.iter_revisions(owner))
        return {
            "counts": reader.export_counts(owner),
            "job": {job.id: job for job in reader.iter_jobs(owner)},
            "memory": {memory.id: memory for memory in reader.iter_memories(owner)},
            "revision": revisions,
            # A tombstone's time is the forget's: one a re-run forgot here is stamped then.
            "tombstone": {t.memory_id: t.namespace for t in reader.iter_tombstones(owner)},
        }


def _differs(kind: str, here: dict, there: dict, name: Callable[[object], str]) -> list[str]:
    out: list[str] = []
    for key in sorted(set(here) | set(there), key=str):
        if key not in there:
            out.append(f"{kind} {name(key)} is in the file only")
        elif key not in here:
            out.append(f"{kind} {name(key)} is in the target only")
        elif here[key] != there[key]:
            out.append(f"{kind} {name(key)} differs ({_fields(here[key], there[key])})")
    return out


def _fields(a: object, b: object) -> str:
    if isinstance(a, (Job, MemoryRecord, TombstoneRow)) and type(a) is type(b):
        names = [n for n in a.__dataclass_fields__ if getattr(a, n) != getattr(b, n)]
        return ", ".join(names) + " changed in the file after it was moved?"
    return f"{a!r} against {b!r}"


async def _compare(source: Store, target: Store, owners: Sequence[str], tokens: Sequence[TokenRow]) -> list[str]:
    out: list[str] = []
    for owner in owners:
        here = await source.read(_owner_state, owner)
        there = await target.read(_owner_state, owner)
        found: list[str] = []
        counts_here, counts_there = here["counts"], there["counts"]
        assert isinstance(counts_here, dict) and isinstance(counts_there, dict)
        for kind in counts_here:
            if counts_here[kind] != counts_there.get(kind):
                found.append(f"{counts_here[kind]} {kind} records in the file, {counts_there.get(kind)} in the target")
        for kind in ("job", "memory", "tombstone"):
            found += _differs(kind, here[kind], there[kind], repr)  # type: ignore[arg-type]
        revisions_here, revisions_there = here["revision"], there["revision"]
        assert isinstance(revisions_here, Counter) and isinstance(revisions_there, Counter)
        if revisions_here != revisions_there:
            memories = sorted(
                {r.memory_id for r in (revisions_here - revisions_there) + (revisions_there - revisions_here)}
            )
            found.append(f"the revisions of {', '.join(map(repr, memories[:SHOWN]))} differ")
        out += [f"owner {owner!r}: {line}" for line in found]
    moved = await target.read(lambda r: {row.hash: row for row in r.list_tokens()})
    for token in tokens:
        row = moved.get(token.hash)
        if row is None:
            out.append(f"token {token.hash[:19]} of {token.owner!r} is in the file only")
        elif (row.owner, row.revoked_at is None) != (token.owner, token.revoked_at is None):
            out.append(f"token {token.hash[:19]} of {token.owner!r} differs (owner or revocation)")
    return out
