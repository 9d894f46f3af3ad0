"""Import at the row level: rows written back by id, all or nothing, within owner walls --
the decisions, written once; each backend supplies only the statements (`ImportTarget`).

Import writes the whole file in one `transaction()`, so a refused or interrupted import
stores nothing. Every row is keyed by its public id (jobs, memories), its natural key
(revisions: memory, time, decision, body) or its primary key (tombstones), and a row already
present is skipped -- so importing a file twice changes nothing. Owners are walls here too: a
row whose id, or any id it names, belongs to another owner is refused.

Imported memories get no vector: the curation worker's backlog pass embeds them, and recall
scores unembedded memories directly until then (`unembedded_count` says how many are left).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Protocol

from ..errors import InvalidInput
from ..records import Job
from . import import_checks
from .contract import StoreWriter
from .records import ImportOutcome, ImportRow, Kind, LaneRow, MemoryRecord, RecordRefused, RevisionRow, TombstoneRow

# Rows handed to ImportTarget.prepare at a time.
PREPARE_CHUNK = 500


@dataclass(frozen=True, slots=True)
class Dangling:
    """A reference this import wrote that names no record of the referring record's owner."""

    kind: Kind  # of the referring record
    key: dict[str, object]  # which one: {"id": ...}, or a revision's memory_id, created_at, decision
    field: str  # e.g. "its retired_into"
    named_kind: str  # "memory" or "job"
    ref: str  # the id it names
    named_owner: str | None  # whose that id is; None when nobody's


class ImportTarget(Protocol):
    """The statements an import needs, over the writer's open transaction: lookups and inserts
    by public id, and no decisions (those are this module's)."""

    def prepare(self, rows: Sequence[ImportRow]) -> None:
        """The next rows to be imported, before they are: a backend that pays a round trip per
        statement may look up what they name at once, and hold back inserts, as long as every
        answer below stays what it would be without it and all is written by `first_dangling`."""

    def job_owner(self, job_id: str) -> str | None: ...

    def memory_state(self, memory_id: str) -> tuple[int, str, str] | None:
        """(pk, owner, status) of the memory row with this id, whatever its status."""

    def tombstone_owner(self, memory_id: str) -> str | None: ...

    def lane_exists(self, owner: str, namespace: str) -> bool: ...

    def ensure_lane(self, owner: str, namespace: str) -> int: ...

    def insert_job(self, job: Job, lane: int, text: str, decision: str | None) -> bool:
        """False when the row was not inserted (its (owner, idempotency key) is taken here)."""

    def insert_memory(self, memory: MemoryRecord, lane: int) -> None:
        """With its derived parts (norm key, and for a live one its text index entry)."""

    def has_revision(self, memory_pk: int, revision: RevisionRow) -> bool: ...

    def insert_revision(self, memory_pk: int, revision: RevisionRow) -> None: ...

    def first_job(self, owner: str, memory_id: str) -> tuple[str, float] | None:
        """(id, created_at) of the earliest of the owner's jobs that ended in the memory."""

    def insert_emptied_memory(
        self, tombstone: TombstoneRow, lane: int, source_job_id: str, created_at: float, updated_at: float
    ) -> None:
        """The body-less row status 'forgotten' a forget leaves behind."""

    def insert_tombstone(self, tombstone: TombstoneRow) -> None: ...

    def high_water(self) -> tuple[int, int, int]:
        """Marks above which the jobs, memories and revisions are this import's."""

    def first_dangling(self, since: tuple[int, int, int]) -> Dangling | None:
        """A reference of the rows written above `since` that names a record of nobody, or of
        another owner than the referring record's."""


def import_rows(writer: StoreWriter, target: ImportTarget, rows: Iterable[tuple[int, ImportRow]]) -> ImportOutcome:
    """Write (line number, row) pairs in the order given, all in one transaction; rows already
    present are skipped. Any refusal -- a row, a reference, or an error raised while `rows` is
    read -- rolls the whole import back: a refused import stores nothing."""
    out = ImportOutcome()
    lanes: dict[tuple[str, str], int] = {}
    with writer.transaction():
        since = target.high_water()
        checked = import_checks.checked(rows, writer)
        while chunk := list(islice(checked, PREPARE_CHUNK)):
            target.prepare([row for _, row in chunk])
            for line, row in chunk:
                try:
                    _import_row(target, row, lanes, out)
                except InvalidInput as exc:
                    raise RecordRefused(str(exc), line=line) from None
        # A reference may name a record further down the file (a job comes before the memory
        # it ended in), so references are checked once everything is written.
        dangling = target.first_dangling(since)
        if dangling is not None:
            raise _refused(dangling)
    return out


def _import_row(target: ImportTarget, row: ImportRow, lanes: dict[tuple[str, str], int], out: ImportOutcome) -> None:
    if isinstance(row, LaneRow):
        known = (row.owner, row.namespace) in lanes or target.lane_exists(row.owner, row.namespace)
        _lane(target, lanes, row.owner, row.namespace)
        out.count("lane", not known)
    elif isinstance(row, Job):
        _import_job(target, row, lanes, out)
    elif isinstance(row, MemoryRecord):
        _import_memory(target, row, lanes, out)
    elif isinstance(row, RevisionRow):
        _import_revision(target, row, out)
    else:
        _import_tombstone(target, row, lanes, out)


def _conflict(kind: str, row_id: str, owner: str) -> InvalidInput:
    return InvalidInput(
        f"{kind} {row_id!r} already exists in this database for an owner other than {owner!r}; "
        "an export cannot be imported a second time under another owner into the same database"
    )


def _lane(target: ImportTarget, lanes: dict[tuple[str, str], int], owner: str, namespace: str) -> int:
    key = (owner, namespace)
    if key not in lanes:
        lanes[key] = target.ensure_lane(owner, namespace)
    return lanes[key]


def _import_job(target: ImportTarget, job: Job, lanes: dict[tuple[str, str], int], out: ImportOutcome) -> None:
    found = target.job_owner(job.id)
    if found is not None:
        if found != job.owner:
            raise _conflict("job", job.id, job.owner)
        out.count("job", False)
        return
    text, decision = job.text, job.decision
    # A backup older than a forget here must not bring the forgotten text back.
    if job.memory_id is not None and target.tombstone_owner(job.memory_id) == job.owner:
        text, decision = "", "forgotten"
    lane = _lane(target, lanes, job.owner, job.namespace)
    # Not inserted also covers (owner, idempotency_key) held here by another job: that key
    # already names an event in this database, and the same key is the same event.
    out.count("job", target.insert_job(job, lane, text, decision))


def _import_memory(
    target: ImportTarget, memory: MemoryRecord, lanes: dict[tuple[str, str], int], out: ImportOutcome
) -> None:
    found = target.memory_state(memory.id)
    owner = found[1] if found is not None else target.tombstone_owner(memory.id)
    if owner is not None:
        if owner != memory.owner:
            raise _conflict("memory", memory.id, memory.owner)
        out.count("memory", False)  # present, or forgotten here: an older backup does not bring it back
        return
    target.insert_memory(memory, _lane(target, lanes, memory.owner, memory.namespace))
    out.count("memory", True)


def _import_revision(target: ImportTarget, revision: RevisionRow, out: ImportOutcome) -> None:
    found = target.memory_state(revision.memory_id)
    if found is None:
        if target.tombstone_owner(revision.memory_id) == revision.owner:
            out.count("revision", False)
            return
        raise InvalidInput(
            f"a revision names memory {revision.memory_id!r}, which is neither earlier in the file nor in "
            "this database; memory records must come before their revisions"
        )
    pk, owner, status = found
    if owner != revision.owner:
        raise _conflict("memory", revision.memory_id, revision.owner)
    if status == "forgotten" or target.has_revision(pk, revision):
        out.count("revision", False)
        return
    target.insert_revision(pk, revision)
    out.count("revision", True)


def _import_tombstone(
    target: ImportTarget, tombstone: TombstoneRow, lanes: dict[tuple[str, str], int], out: ImportOutcome
) -> None:
    found = target.tombstone_owner(tombstone.memory_id)
    if found is not None:
        if found != tombstone.owner:
            raise _conflict("tombstone", tombstone.memory_id, tombstone.owner)
        out.count("tombstone", False)
        return
    memory = target.memory_state(tombstone.memory_id)
    if memory is not None:
        _, owner, status = memory
        if owner != tombstone.owner:
            raise _conflict("memory", tombstone.memory_id, tombstone.owner)
        if status != "forgotten":
            # The memory was forgotten at the source but still holds content here.
            out.to_forget.append((tombstone.owner, tombstone.memory_id))
            out.count("tombstone", True)
            return
    lane = _lane(target, lanes, tombstone.owner, tombstone.namespace)
    if memory is None:
        _emptied_memory(target, tombstone, lane)
    target.insert_tombstone(tombstone)
    out.count("tombstone", True)


def _emptied_memory(target: ImportTarget, tombstone: TombstoneRow, lane: int) -> None:
    """The row a forget leaves behind -- no body, status 'forgotten' -- which the erased jobs
    name and history reports on, as it was at the source.

    A file from before tombstones carried the memory's bookkeeping gives only the jobs: the
    first one that ended in the memory stands for its source. With no job at all there is
    nothing to rebuild from, and the tombstone stays alone.
    """
    source, created = tombstone.source_job_id, tombstone.created_at
    if source is None:
        first = target.first_job(tombstone.owner, tombstone.memory_id)
        if first is None:
            return
        source, created = first[0], created if created is not None else first[1]
    forgotten_at = tombstone.forgotten_at
    updated = tombstone.updated_at if tombstone.updated_at is not None else forgotten_at
    target.insert_emptied_memory(tombstone, lane, source, created if created is not None else forgotten_at, updated)


def _refused(dangling: Dangling) -> RecordRefused:
    key = dangling.key
    what = (
        f"a revision of memory {key['memory_id']!r}"
        if dangling.kind == "revision"
        else f"{dangling.kind} {key['id']!r}"
    )
    named = f"{dangling.field} names {dangling.named_kind} {dangling.ref!r}"
    if dangling.named_owner is None:
        reason = f"{what}: {named}, which is neither in the file nor in this database"
    else:
        reason = f"{what}: {named} of another owner; an import cannot refer to another owner's records"
    return RecordRefused(reason, kind=dangling.kind, key=key)
