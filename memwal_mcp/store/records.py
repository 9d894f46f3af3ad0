"""The records every store backend hands across its contract: frozen, typed, backend-neutral.

One shape per concept. A memory row's `pk` is the backend's own integer key for it (a rowid on
SQLite, a bigserial on PostgreSQL): stable while the memory lives, never shown to a user (public
ids are `m_...` / `j_...`).
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import IdempotencyKeyReused, InvalidInput, NotFound
from ..records import Job
from ..wording import counted


@dataclass(frozen=True, slots=True)
class MemoryRow:
    pk: int
    id: str
    owner: str
    namespace: str
    body: str
    occurrences: int
    created_at: float
    updated_at: float
    occurred_at: float | None
    lane: int
    norm_key: str
    expires_at: float | None = None
    superseded_by: str | None = None  # set on a superseded memory (not live): the memory that replaced it

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True, slots=True)
class JournalCount:
    """How many of an owner's jobs share a status, a decision and a day (StoreReader.journal_counts)."""

    status: str
    decision: str | None
    day: int | None  # days since the window's first instant; None for a job filed before it
    count: int


@dataclass(frozen=True, slots=True)
class JobRequest:
    """One fact to file as a remember job (StoreWriter.insert_jobs)."""

    namespace: str
    text: str
    idempotency_key: str | None = None
    occurred_at: float | None = None
    expires_at: float | None = None
    supersedes: tuple[str, ...] = ()


class KeyReused(IdempotencyKeyReused):
    """Request `index` of an insert_jobs call names an idempotency key already used for a job
    that differs in `field`: the call stores nothing."""

    def __init__(self, index: int, key: str, field: str) -> None:
        super().__init__(
            f"idempotency_key {key!r} was already used for a different {field}; use a new key for a new fact"
        )
        self.index, self.key, self.field = index, key, field


def check_replay(index: int, request: JobRequest, job: Job) -> None:
    """A key replays its job only for the same request: any field that differs is KeyReused
    (the same rule on every backend, for remember and remember_many alike)."""
    for name, same in (
        ("text", job.text == request.text),
        ("namespace", job.namespace == request.namespace),
        ("occurred_at", job.occurred_at == request.occurred_at),
        ("expires_at", job.expires_at == request.expires_at),
        ("supersedes", job.supersedes == request.supersedes),
    ):
        if not same:
            assert request.idempotency_key is not None  # only a key replays a job
            raise KeyReused(index, request.idempotency_key, name)


def new_job_id() -> str:
    return "j_" + secrets.token_hex(8)


def ids_of(column: str | None) -> tuple[str, ...]:
    """Memory ids kept comma-separated in one column (ids never hold a comma)."""
    return tuple(column.split(",")) if column else ()


class SupersedeUnknown(NotFound):
    """Request `index` of an insert_jobs call supersedes an id that is no memory of the owner
    (another owner's id looks the same): the call stores nothing."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


class SupersedeRefused(InvalidInput):
    """Request `index` of an insert_jobs call supersedes a memory that cannot be replaced
    (forgotten, merged, superseded, or named by a queued job already): the call stores nothing."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


# What a supersedes id's memory is, as a backend reads it: (status, retired_into, superseded_by).
MemoryState = tuple[str, str | None, str | None]


def check_supersedable(index: int, memory_id: str, state: MemoryState | None, queued_by: str | None) -> None:
    """A fact can replace only a live memory of its own owner, and only one fact at a time: a
    second fact filed while the first is queued would find the memory gone once the first is
    curated, and be dropped unseen. `queued_by`: a queued job of the owner that supersedes it."""
    if state is None:
        raise SupersedeUnknown(
            index, f"supersedes names {memory_id!r}, which is no memory of yours; nothing was stored"
        )
    status, into, by = state
    if status == "forgotten":
        raise SupersedeRefused(index, f"supersedes names {memory_id!r}, which was forgotten; nothing was stored")
    if by is not None:
        raise SupersedeRefused(
            index, f"supersedes names {memory_id!r}, which {by!r} already superseded; nothing was stored"
        )
    if status != "live":
        raise SupersedeRefused(
            index,
            f"supersedes names {memory_id!r}, which was merged into {into!r}: supersede {into!r}; nothing was stored",
        )
    if queued_by is not None:
        raise SupersedeRefused(
            index,
            f"supersedes names {memory_id!r}, which is already being superseded by queued job {queued_by};"
            " nothing was stored",
        )


def not_superseded(memory_id: str, missed: Sequence[tuple[str, MemoryState | None]]) -> str | None:
    """What a curated job says of the memories it named but could not supersede (another fact
    superseded one first, a consolidation merged it, a forget erased it): never dropped
    unsaid. None when it superseded them all."""
    said = []
    for other, state in missed:
        status, into, by = state or ("forgotten", None, None)
        if other == memory_id:
            why = "this fact was folded into it"
        elif by is not None:
            why = f"{by} superseded it first"
        elif status == "retired":
            why = f"it was merged into {into}"
        else:
            why = "it was forgotten"
        said.append(f"{other} ({why})")
    return f"not superseded: {'; '.join(said)}" if said else None


def nothing_undone(memory_id: str, change: str, missed: Sequence[tuple[str, MemoryState | None]]) -> InvalidInput:
    """The refusal of an undo that would change nothing: the memories its last change named
    (`change` is "superseded" or "brought back") have all moved on since. Said, never reported
    as a success that did nothing."""
    said = []
    for other, state in missed:
        status, into, by = state or ("forgotten", None, None)
        if status == "forgotten":
            why = "was forgotten"
        elif by is not None:
            why = f"was superseded by {by}"
        elif status == "retired":
            why = f"was merged into {into}"
        else:
            why = "is live"
        said.append(f"{other} {why}")
    named = ", ".join(other for other, _ in missed)
    return InvalidInput(
        f"nothing to undo for {memory_id}: its last change {change} {named}, and since then {'; '.join(said)};"
        " nothing was changed"
    )


@dataclass(frozen=True, slots=True)
class KeyCopies:
    """How often one normalized text is stored in some lanes (within a time window, if given)."""

    rows: int  # live memories with that text
    occurrences: int  # exact repeats recorded on them
    folded_by_llm: int  # proposals a curation model folded into them (SKIP)
    ids: tuple[str, ...] = ()  # the public ids of the `rows` memories

    @property
    def total(self) -> int:
        return self.rows + self.occurrences + self.folded_by_llm


# Job decisions that record the job on an existing memory without changing its body: an exact
# repeat of its normalized text, and a proposal the LLM judged to add nothing (SKIP).
EXACT_REPEAT = "occurrence"


FOLDED_BY_LLM = "skipped"


@dataclass(frozen=True, slots=True)
class Lane:
    id: int
    owner: str
    namespace: str


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """A job as the worker sees it: with its arrival order and lane."""

    seq: int
    id: str
    owner: str
    namespace: str
    lane_id: int
    text: str
    attempts: int
    created_at: float
    occurred_at: float | None
    expires_at: float | None = None
    # The memories it replaces: curation makes such a job a memory of its own, never a merge.
    supersedes: tuple[str, ...] = ()


def queued_job(row: Sequence) -> QueuedJob:
    """A queued job from a row of seq, id, owner, namespace, lane_id, text, attempts,
    created_at, occurred_at, expires_at, supersedes (the column as stored)."""
    seq, job_id, owner, namespace, lane, text, attempts, created_at, occurred_at, expires_at, supersedes = row
    return QueuedJob(
        seq, job_id, owner, namespace, lane, text, attempts, created_at, occurred_at, expires_at, ids_of(supersedes)
    )


class JobWithdrawn(Exception):
    """The job left the queue while a worker curated it (a forget erased it): roll back what
    was written for it, or the forgotten text would come back as a memory."""


@dataclass(frozen=True, slots=True)
class Forgotten:
    memory_ids: tuple[str, ...]  # the memory and those folded into it
    jobs: int  # jobs erased: those that ended in these memories and queued repeats of their text
    wal_cleared: bool = True  # False: a reader kept the write-ahead log from being emptied
    already: bool = False  # it was forgotten before: nothing was erased this time
    via_job: str | None = None  # the job id asked for, when the fact was named by its remember job
    # Memories the erased ones had superseded, live again (as an undo of the supersede brings them).
    restored: tuple[str, ...] = ()
    # Memories the erased ones had superseded that are past their expiry: no longer superseded
    # (by a memory that is gone), but expired, so not live again (recall leaves them out;
    # include_expired shows them, marked expired; purge --expired erases them).
    expired_back: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Undone:
    """What an undo did, every part of it said: a reply that names only the body would hide
    that a redo retired other memories again."""

    body: str  # the body the memory has now (unchanged by a supersede or its redo)
    restored: tuple[str, ...] = ()  # memories live again on their own (undo of a merge or a supersede)
    superseded_again: tuple[str, ...] = ()  # a redo of a supersede: replaced by the memory again
    folded_again: tuple[str, ...] = ()  # a redo of a merge: folded into the memory again


@dataclass(frozen=True, slots=True)
class StoredCopy:
    """A stored copy of a text (StoreReader.copies_of): a memory -- live, expired or superseded --
    or a queued remember job. `expires_at` and `superseded_by` say why recall may not show it."""

    id: str
    key: str  # norm_key() of the text
    text: str
    expires_at: float | None = None
    superseded_by: str | None = None

    @classmethod
    def of(cls, row: MemoryRow) -> StoredCopy:
        """A memory as recall reads it (its `superseded_by` a queued job's id while one replaces it)."""
        return cls(row.id, row.norm_key, row.body, row.expires_at, row.superseded_by)

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True, slots=True)
class ReindexState:
    model_id: str
    dim: int
    vector_table: str
    last_rowid: int
    started_at: float


@dataclass(frozen=True, slots=True)
class TokenRow:
    hash: str
    owner: str
    scopes: tuple[str, ...]
    label: str | None
    created_at: float
    revoked_at: float | None


@dataclass(frozen=True, slots=True)
class LaneRow:
    owner: str
    namespace: str


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A live or retired memory, without its derived parts (norm key, FTS row, vector)."""

    id: str
    owner: str
    namespace: str
    body: str
    status: Literal["live", "retired"]
    retired_into: str | None
    source_job_id: str
    occurrences: int
    occurred_at: float | None
    created_at: float
    updated_at: float
    expires_at: float | None = None
    # A retired memory with superseded_by was replaced by that memory (not merged into it:
    # retired_into is then None).
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class RevisionRow:
    """A previous body of a memory, named by the memory's public id."""

    owner: str
    memory_id: str
    body: str
    decision: str
    job_id: str | None
    llm_model: str | None
    guard: str | None
    merged_ids: tuple[str, ...]
    created_at: float
    expires_at: float | None = None  # the memory's expiry while this was its body (None in older files)


@dataclass(frozen=True, slots=True)
class TombstoneRow:
    """A forgotten memory, never its text. The fields after `forgotten_at` are the memory's
    own bookkeeping, so an import can rebuild the emptied row that history and the journal
    point at (None in files written before they were exported)."""

    memory_id: str
    owner: str
    namespace: str
    jobs: int
    forgotten_at: float
    source_job_id: str | None = None
    retired_into: str | None = None
    occurred_at: float | None = None
    created_at: float | None = None
    updated_at: float | None = None


ImportRow = LaneRow | Job | MemoryRecord | RevisionRow | TombstoneRow


Kind = Literal["lane", "job", "memory", "revision", "tombstone"]


KINDS: tuple[Kind, ...] = ("lane", "job", "memory", "revision", "tombstone")


@dataclass(slots=True)
class ImportOutcome:
    """What an import did. `to_forget`: (owner, memory id) of tombstones whose memory is
    still present here; the caller forgets them through the service (which writes the tombstone)."""

    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    to_forget: list[tuple[str, str]] = field(default_factory=list)

    def count(self, kind: str, added: bool) -> None:
        target = self.added if added else self.skipped
        target[kind] = target.get(kind, 0) + 1


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Problem:
    severity: Severity
    code: str
    detail: str
    table: str | None = None
    ref: str | None = None  # the row's public id (job id, memory id, revision id, lane id)

    def line(self) -> str:
        where = f"{self.table} {self.ref}: " if self.table and self.ref else f"{self.table}: " if self.table else ""
        return f"{self.severity:<7} {self.code:<28} {where}{self.detail}"


@dataclass(frozen=True, slots=True)
class StoreCounts:
    lanes: int
    jobs: dict[str, int]  # by status
    memories: dict[str, int]  # by status
    vectors: int
    revisions: int

    def summary(self) -> str:
        jobs = sum(self.jobs.values())
        memories = sum(self.memories.values())
        live = self.memories.get("live", 0)
        return f"{counted(jobs, 'job')}, {counted(memories, 'memory')} ({live} live), {counted(self.lanes, 'lane')}"


@dataclass(frozen=True, slots=True)
class QueuedText:
    text: str
    lane: int


@dataclass(frozen=True, slots=True)
class Scored:
    """The text-search strength each text would have as a memory (contract.TextMatch.strength;
    None when no query term occurs in it), and what the texts add to the owner's live memories
    once curated."""

    strengths: list[float | None]
    keys: list[str]  # norm_key of each text
    added: dict[int, tuple[int, int]]  # lane -> (memories, characters) the texts add to it
    # Searched lane -> the most strength a memory of it could have for the query (every term,
    # each at a saturating frequency), over the statistics it will have with the texts in.
    ceilings: dict[int, float]


def summary_line(problems: Sequence[Problem], counts: StoreCounts) -> str:
    """The last line of `memwal-mcp check`: the verdict, the tally and what the store holds."""
    tally = Counter(p.severity for p in problems)
    errors, warnings, infos = tally["error"], tally["warning"], tally["info"]
    verdict = "FAILED" if errors else "ok"
    return (
        f"check {verdict}: {counted(errors, 'error')}, {counted(warnings, 'warning')}, {infos} info"
        f" ({counts.summary()})"
    )


class RecordRefused(InvalidInput):
    """One record of an import cannot be written. `line` is its line when known; otherwise
    `kind` and `key` say which record it is (a reference, checked once the whole file is written)."""

    def __init__(
        self, reason: str, *, line: int | None = None, kind: Kind | None = None, key: dict[str, object] | None = None
    ) -> None:
        super().__init__(reason)
        self.reason, self.line, self.kind, self.key = reason, line, kind, key or {}


@dataclass(frozen=True, slots=True)
class BackupResult:
    source: Path
    path: Path
    bytes: int
    seconds: float
    counts: StoreCounts
    problems: tuple[Problem, ...]  # what `check` finds in the copy (empty when verify=False or clean)
