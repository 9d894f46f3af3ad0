"""Records that cross layers (store -> service -> MCP/CLI). Frozen and typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

JobStatus = Literal["queued", "done", "failed"]


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    owner: str
    namespace: str
    text: str
    idempotency_key: str | None
    status: JobStatus
    attempts: int
    decision: str | None
    memory_id: str | None
    # Why the last attempt failed; on a done job, what it could not do as asked (the memories
    # it was to supersede that were no longer live when it was curated), shown as its note.
    error: str | None
    created_at: float
    updated_at: float
    occurred_at: float | None = None
    # From when the fact stops being recalled or listed (it stays stored until purged).
    expires_at: float | None = None
    # Memory ids the fact replaces: once curated, they are superseded by the memory it ends in.
    supersedes: tuple[str, ...] = ()
    # The analyze request (a job id) the fact was extracted from.
    source_job_id: str | None = None


# The decision of an analyze request's journal row: it holds the source text, is never
# curated into a memory, and names no memory.
ANALYZED = "analyzed"


@dataclass(frozen=True, slots=True)
class MemoryNow:
    """What the memory a done job is in holds now, read with the job: a repeat or merge gave it the later
    of the two expiries (none when either had none), which need not be the job's own."""

    expires_at: float | None


@dataclass(frozen=True, slots=True)
class JobReport:
    """A job as memwal_remember_status reports it. `extracted` is set for an analyze request (its source
    text kept or forgotten): the facts extracted from it that stay remembered (memory ids; job ids of
    those still queued), since a request becomes no memory of its own. `memory`: see MemoryNow (None
    when the job is in no memory that is kept)."""

    job: Job
    extracted: tuple[str, ...] | None = None
    memory: MemoryNow | None = None
    # False when this server runs no curation worker (`serve --no-worker`): a queued job waits for one.
    curated_here: bool = True


# The revision decision of a memory that superseded others (its body unchanged; merged_ids
# names them), and of an undo that brought them back: undoing one does the other again.
SUPERSEDED = "superseded"
UNSUPERSEDED = "unsuperseded"


@dataclass(frozen=True, slots=True)
class RememberOutcome:
    job: Job
    # True when an earlier job with the same idempotency key was returned instead of a new one.
    replayed: bool
    memory: MemoryNow | None = None  # see JobReport
    curated_here: bool = True  # see JobReport


@dataclass(frozen=True, slots=True)
class AnalyzeOutcome:
    """What memwal_analyze filed. Extraction worked: `request` is the journal row holding the
    source text and `facts` the remember jobs extracted from it. It failed: `request` is None,
    `facts` the one job remembering the source whole, and `error` says why."""

    request: Job | None
    facts: list[RememberOutcome]
    error: str | None = None
    left_out: int = 0  # facts beyond the per-call limit
    # Why each refused item of the model's list was refused: no text at all (a number, null, an
    # object without one), or a text a remember would refuse (empty, too long, control characters).
    refusals: tuple[str, ...] = ()
    repeated: int = 0  # facts the model returned more than once in this reply

    @property
    def refused(self) -> int:
        return len(self.refusals)


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    text: str
    score: float
    namespace: str
    created_at: float
    updated_at: float
    # Copies of this fact folded into this hit: rows and recorded occurrences with the same
    # normalized text, plus the similar facts a curation model folded into it (SKIP).
    copies: int = 0
    # True for a job the curation worker has not folded in yet (read-your-writes fallback).
    pending: bool = False
    occurred_at: float | None = None
    # norm_key() of the text when the store already knows it (saves normalizing at collapse).
    key: str | None = None
    # Of `copies`, those a curation model folded in as adding nothing (not the same text).
    folded_by_llm: int = 0
    # The query's signals for this fact, before any recency weighting: whether it shares a
    # content word with the query, and its meaning score (cosine), when one was computed.
    matched: bool = False
    cosine: float | None = None
    # From when it is no longer recalled (without include_expired); None: it does not expire.
    expires_at: float | None = None
    # Set on a superseded memory (found with include_superseded): the memory that replaced it.
    superseded_by: str | None = None
    # The other memories with the same normalized text, folded into this hit.
    collapsed_ids: tuple[str, ...] = ()

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    @property
    def when(self) -> float:
        """The date a reader cares about: when it happened if known, else when it was remembered."""
        return self.occurred_at if self.occurred_at is not None else self.created_at


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    limit: int
    namespace: str
    hits: list[Hit] = field(default_factory=list)
    # False when the query has no word or number to search for (so nothing can be relevant).
    searchable: bool = True
    # With a character budget: relevant hits found but left out because the reply would exceed it.
    max_chars: int | None = None
    omitted: int = 0
    # When not even the best hit fits max_chars: the characters its lines need (0 otherwise).
    best_chars: int = 0

    @property
    def collapsed(self) -> int:
        return sum(hit.copies for hit in self.hits)


@dataclass(frozen=True, slots=True)
class Revision:
    body: str
    decision: str  # what replaced this body
    job_id: str | None
    llm_model: str | None
    guard: str | None
    merged_ids: tuple[str, ...]
    created_at: float
    # The memory's expiry while this was its body: an undo back to it gives back both.
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class History:
    """Where a memory came from: its current body, previous bodies, and the jobs folded into it."""

    memory_id: str
    namespace: str
    body: str
    status: str
    retired_into: str | None
    created_at: float
    updated_at: float
    revisions: list[Revision]  # newest first
    jobs: list[Job]  # newest first: the source job, occurrences, merges (also of memories retired into it)
    merged_from: list[str]
    expires_at: float | None = None
    superseded_by: str | None = None  # the memory that replaced this one
    supersedes: list[str] = field(default_factory=list)  # memories this one replaced (still superseded)
    occurred_at: float | None = None  # when the fact happened, if the remember said so
    occurrences: int = 0  # exact repeats recorded on it
    # Status of the memory that replaced it (live, retired, superseded, forgotten): forgotten only
    # in a database whose forget, before this version, left an expired memory superseded.
    superseded_by_status: str | None = None
    # True when `memwal-mcp undo <superseded_by>` brings this memory back: the memory that
    # replaced it is live and that supersede is its last change.
    undo_restores: bool = False
    # A live memory a queued correction supersedes: that job (recall and list leave it out already).
    being_replaced_by: str | None = None
    # Where the replacement went, when it is no longer live: the memory that superseded it or that
    # it was folded into, so "superseded since" can say by what.
    superseded_by_next: str | None = None
    # The replacement's expiry: a replacement past it no longer stands in for this memory.
    superseded_by_expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """A memory as `list` shows it."""

    id: str
    text: str
    namespace: str
    created_at: float
    updated_at: float
    occurred_at: float | None
    occurrences: int
    expires_at: float | None = None
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryPage:
    items: list[MemoryItem]
    next_cursor: str | None  # pass back to get the next page; None at the end


@dataclass(frozen=True, slots=True)
class ForgetOutcome:
    memory_id: str
    erased_memories: tuple[str, ...]  # the memory and those a CONSOLIDATE folded into it
    erased_jobs: int
    # False: the text is gone from the database, but a reader on an older snapshot kept the
    # write-ahead log, which still holds earlier copies, from being emptied in time.
    wal_cleared: bool = True
    # True: it was forgotten before; nothing was erased this time.
    already: bool = False
    # Set when the fact was named by its remember job (a queued hit's id): erased_memories is
    # empty if the job was still queued, else the memory it became.
    job_id: str | None = None
    # Memories the erased ones had superseded, live again (recall finds them; forget them too if
    # they should go as well).
    restored: tuple[str, ...] = ()
    # Memories the erased ones had superseded that are past their expiry: no longer superseded,
    # but expired, so still out of recall (include_expired shows them; purge --expired erases them).
    expired_back: tuple[str, ...] = ()
    # Set when the id named an analyze request, whose source text is what was erased: the facts
    # extracted from it, which stay remembered (memory ids; job ids of those still queued).
    extracted: tuple[str, ...] | None = None
    # The reverse: the analyze requests the erased facts were extracted from that still hold their
    # source text (a conversation the fact is in, in other words); forgetting a request erases it.
    sources: tuple[str, ...] = ()
    # What no forget on this backend can remove (store.erasure_left): on PostgreSQL, copies of the
    # bytes in freed space of its files. None on SQLite, whose forget leaves none once wal_cleared.
    disk_copies: str | None = None


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    memory_id: str
    body: str
    restored: list[str]  # memories live again on their own (what a merge folded in, a supersede replaced)
    superseded_again: list[str] = field(default_factory=list)  # a redo of a supersede: replaced again
    folded_again: list[str] = field(default_factory=list)  # a redo of a merge: folded in again
