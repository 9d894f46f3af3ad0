"""The store contract: everything the service, curation, recall, transfer, the commands and
doctor may ask of a storage backend, and nothing a backend's engine would make them assume.

Three faces, because work against a database comes in three sizes:

- `Store` (async) is what the process holds: it opens and closes the backend and runs units of
  work off the event loop. `read(fn, ...)` runs `fn(reader, ...)` on a reader, `write(fn, ...)`
  runs `fn(writer, ...)` on the writer, so a transaction of many statements costs one hop, and a
  recall never queues behind the curation worker's writes.
- `StoreReader` (sync) is one consistent view for the length of `fn`: rows by key, text and
  vector search, queue state, export batches.
- `StoreWriter` (sync) adds writes. `transaction()` makes them atomic and takes the write lock
  up front (read-then-write cannot race); inside one, `savepoint()` scopes one curation job, so a
  failing job rolls back alone and the others commit together. How a backend does either (BEGIN
  IMMEDIATE and SAVEPOINT, or SERIALIZABLE and nested transactions) is its own business.

Nothing here assumes rowids, FTS5, sqlite-vec, PRAGMA or one file: a memory row's `pk` is the
backend's integer key; text search takes plain terms and answers with a strength (higher is
better); vector search answers cosines; `location` is what to show a user; `own_files` lists the
files an export must never overwrite (none for a database server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Concatenate, NamedTuple, ParamSpec, Protocol, TypeVar

import numpy as np

from ..records import Job, Revision
from .records import (
    BackupResult,
    Forgotten,
    ImportOutcome,
    ImportRow,
    JobRequest,
    JournalCount,
    KeyCopies,
    Kind,
    Lane,
    LaneRow,
    MemoryRecord,
    MemoryRow,
    Problem,
    QueuedJob,
    QueuedText,
    ReindexState,
    RevisionRow,
    Scored,
    StoreCounts,
    StoredCopy,
    TokenRow,
    TombstoneRow,
    Undone,
)

T = TypeVar("T")
P = ParamSpec("P")


class VectorMatch(NamedTuple):
    """A memory the vector search found, with its cosine to the query."""

    pk: int
    cosine: float


class TextMatch(NamedTuple):
    """A memory the text search found. `strength` is Okapi BM25 of the memory for the query
    over its own lane's statistics (higher is better, 0 means no query term occurs in it):
    what the owner keeps in other namespaces never changes it."""

    pk: int
    strength: float


class VectorSearch(Protocol):
    """The nearest memories of one lane for each row of `queries` (unit vectors), best first,
    at most `k` each, only those with cosine >= `min_score` when given.

    It finds every memory that was live in the lane when it was obtained; it may also see
    memories created since, and may still return one forgotten since (callers read rows by
    key, which answers live memories only). It needs no connection and may run on any thread:
    curation and recall run it beside other work.

    A big lane may be searched approximately (PostgreSQL's HNSW graph, SQLite's quantized
    heads): a true neighbour can be missed, every cosine returned is still exact. `exact=True`
    scans every vector; recall asks for it when a memory it found by its words lies nearer
    the query than the approximate answer's own (recall/search.py, _doubted)."""

    def __call__(
        self, queries: np.ndarray, k: int, min_score: float | None = None, exact: bool = False
    ) -> list[list[VectorMatch]]: ...


class StoreReader(Protocol):
    # --- vectors ---------------------------------------------------------------
    def vector_model(self) -> tuple[str, int] | None:
        """(model id, dimensions) of the stored vectors; None before the first."""

    def vector_search(self, lane: int) -> VectorSearch:
        """The one kNN path: recall, curation and the benchmarks all search through it."""

    def cosines(self, lane: int, query: np.ndarray, pks: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with these memories of the lane (those that have a vector)."""

    def vectors_of(self, lane: int, pks: Sequence[int]) -> dict[int, np.ndarray]: ...

    def unembedded(self, limit: int) -> list[tuple[int, int, str]]:
        """(pk, lane, body) of live memories still waiting for a vector."""

    def unembedded_in_lane(self, lane: int, limit: int) -> list[MemoryRow]: ...

    # --- words -----------------------------------------------------------------
    def text_search(self, lanes: Sequence[int], terms: Sequence[str], limit: int) -> tuple[list[TextMatch], bool]:
        """Live memories of these lanes (all of one owner) holding any of the terms, strongest
        first, at most `limit`; and True when there are no more to find. Terms are plain words:
        the backend quotes them for its own query syntax."""

    def text_strengths(self, lanes: Sequence[int], terms: Sequence[str], pks: Sequence[int]) -> dict[int, float]:
        """`TextMatch.strength` of these memories (those holding a term), found without the
        text index: for memories the index does not hold yet."""

    def score_queued(
        self, lanes: Sequence[int], terms: Sequence[str], texts: Sequence[QueuedText], repeats_fold: bool
    ) -> Scored:
        """The strength each queued text would have as a memory of its lane, on the same scale,
        and each searched lane's ceiling for the terms (see Scored): both over the statistics the
        lanes will have once the texts are in."""

    def lane_totals(self, lanes: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(live memories, characters of their bodies) of each lane."""

    # --- memories --------------------------------------------------------------
    def memories_by_pk(self, pks: Sequence[int]) -> dict[int, MemoryRow]:
        """Live memories by key; a key that is not live is missing from the answer."""

    def adjacent(self, pks: Sequence[int]) -> dict[int, tuple[MemoryRow | None, MemoryRow | None]]:
        """For each of these live memories, the live memories of its lane created just before
        and just after it (by created_at, then pk): a chat turn's neighbours, when turns are
        remembered in order. A key that is not live is missing from the answer."""

    def memory_by_id(self, owner: str, memory_id: str) -> tuple[MemoryRow, str, str | None] | None:
        """(row, status, retired into) of any memory of the owner with that public id. Status is
        live, retired (merged: retired into names where), superseded (`row.superseded_by` names
        the memory that replaced it) or forgotten."""

    def live_by_norm_key(self, lane: int, key: str) -> list[tuple[int, str, str]]:
        """(pk, id, body) of the lane's live memories with that normalized text."""

    def live_norm_keys(self, lane: int, keys: Iterable[str]) -> set[str]: ...

    def copies_by_key(
        self,
        lanes: Sequence[int],
        keys: Iterable[str],
        since: float | None = None,
        until: float | None = None,
        live_at: float | None = None,
        superseded: bool = False,
    ) -> dict[str, KeyCopies]:
        """For each normalized text with a memory in the lanes that a recall could show, how many
        copies of it are stored (memories, and repeats recorded on them), each counted when its own instant falls
        in [since, until]: how many copies a hit stands for, never which memory is in a window.
        Only what the recall could show is counted: with `live_at`, no memory expired by then
        (nor its repeats); with `superseded`, superseded memories too, as list_memories reads
        them. `ids` names the memories counted in `rows`, oldest first."""

    def repeats_in_window(self, pks: Sequence[int], since: float | None, until: float | None) -> dict[int, float]:
        """pk -> the latest instant (occurred_at, else when remembered) of a repeat recorded on
        that live memory itself (exact, or folded in by SKIP) inside [since, until]; missing when
        none is. What puts a memory dated outside a window into it: a copy with the same text
        elsewhere does not."""

    def copies_of(self, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
        """Every stored copy of these texts in the lanes, oldest first, then the queued jobs: the
        owner's memories holding one -- live, expired or superseded (not one merged into another:
        forgetting that one erases it) -- and queued jobs filing one. What forgetting it erases."""

    def revisions(self, pk: int) -> list[Revision]:
        """Previous bodies of a memory, newest first."""

    def retired_into(self, owner: str, memory_id: str) -> list[str]: ...

    def list_memories(
        self,
        owner: str,
        namespace: str | None,
        before: tuple[float, str] | None,
        since: float | None,
        limit: int,
        live_at: float | None = None,
        superseded: bool = False,
        until: float | None = None,
        expired_by: float | None = None,
        superseded_only: bool = False,
    ) -> list[MemoryRow]:
        """The owner's live memories, newest first; with `live_at`, leaving out those whose
        `expires_at` is at or before it; with `superseded`, the superseded memories too (their
        rows carry `superseded_by`); with `since` / `until`, only those whose own instant
        (occurred_at, else created_at), or a repeat's recorded on them, is in [since, until],
        as recall's window reads them; with `expired_by`, only those expired by then; with
        `superseded_only`, only the superseded ones."""

    def expired_memories(self, owner: str, now: float, limit: int) -> list[str]:
        """Ids of the owner's live memories whose expires_at is at or before `now`: what purge erases."""

    def superseded_in(self, lanes: Sequence[int], limit: int) -> list[MemoryRow]:
        """Superseded memories of each lane (left the indexes, as merged ones do), most recently
        superseded first, at most `limit` per lane: what a recall with include_superseded scores."""

    def superseded_by(self, owner: str, memory_id: str) -> list[str]:
        """Ids of the owner's memories that this memory superseded (and that still are)."""

    def counters(self) -> dict[str, int]: ...

    def deferred_nominations(self, limit: int) -> tuple[int, list[tuple[int, str]]] | None: ...

    def deferred_nomination_count(self) -> int: ...

    def deferred_nomination_ids(self) -> list[tuple[str, str, str]]:
        """(owner, memory id, job id) of every memory whose nominees are still to be counted,
        named by public id (a pk means nothing in another store): what a migration carries."""

    # --- jobs and lanes --------------------------------------------------------
    def owner_lanes(self, owner: str) -> list[Lane]: ...

    def live_count(self, lane: int) -> int:
        """Live memories in the lane."""

    def jobs_by_id(self, owner: str, job_ids: Sequence[str]) -> dict[str, Job]: ...

    def jobs_for_memories(self, owner: str, memory_ids: Sequence[str]) -> list[Job]: ...

    def extracted_from(self, owner: str, request_id: str) -> list[Job]:
        """The owner's fact jobs filed from that analyze request (source_job_id), in the order
        filed: what stays remembered when the request's source text is forgotten."""

    def queued_fairly(self, lanes: Sequence[int], max_chars: int, max_jobs: int) -> list[QueuedJob]: ...

    def still_queued(self, job_ids: Sequence[str]) -> set[str]: ...

    def queued_mark(self, lanes: Sequence[int]) -> int | None:
        """A mark of the newest job queued in these lanes, for `queued_through`."""

    def queued_through(self, lanes: Sequence[int], mark: int) -> bool:
        """True while any job up to the mark is still queued in these lanes."""

    def queue_counts(self) -> dict[str, int]: ...

    def journal_counts(self, owner: str, first: float) -> list[JournalCount]:
        """The owner's jobs counted by status, decision and UTC day from `first` on (`day` = whole
        days since `first`; None for a job filed before it), in one GROUP BY: the dashboard's
        activity figures, read without the jobs' text."""

    def has_due_jobs(self, now: float) -> bool: ...

    def next_batch(self, lane: int, limit: int, now: float, after_seq: int = 0) -> list[QueuedJob]: ...

    # --- tokens ----------------------------------------------------------------
    def token_by_hash(self, digest: str) -> TokenRow | None: ...

    def list_tokens(self) -> list[TokenRow]: ...

    def count_active_tokens(self) -> int: ...

    # --- reindex, integrity, export --------------------------------------------
    def reindex_done_upto(self, mark: int) -> int: ...

    def reindex_remaining(self, after: int) -> int: ...

    def reindex_batch(self, after: int, limit: int) -> list[tuple[int, int, str]]:
        """(pk, lane, body) of the next live memories to re-embed, after `after`."""

    def unembedded_count(self, owners: Sequence[str] | None) -> int: ...

    def check(self) -> tuple[list[Problem], StoreCounts]:
        """Every integrity problem the backend can find, and what it holds. Derived data that
        lives outside the database and is rebuilt on demand (SQLite's lane sidecars) is
        repaired on the way: a damaged copy is discarded, never trusted again."""

    def created_at(self) -> float | None: ...

    def snapshot(self) -> AbstractContextManager[None]:
        """Every read inside sees one state of the store (an export is consistent)."""

    def export_counts(self, owner: str | None) -> dict[Kind, int]: ...

    def exported_owners(self, owner: str | None) -> list[str]: ...

    def iter_lanes(self, owner: str | None) -> Iterator[LaneRow]: ...

    def iter_jobs(self, owner: str | None) -> Iterator[Job]: ...

    def iter_memories(self, owner: str | None) -> Iterator[MemoryRecord]: ...

    def iter_revisions(self, owner: str | None) -> Iterator[RevisionRow]: ...

    def iter_tombstones(self, owner: str | None) -> Iterator[TombstoneRow]: ...


class StoreWriter(StoreReader, Protocol):
    """The writer's view. Some methods are a unit of work by themselves and commit on their own:
    insert_job, claim_lane, insert_token, revoke_token, forget_memory, undo_last_change,
    ensure_vector_table, set_vectors, the reindex_* calls and import_rows; call them outside
    `transaction()`. The others (curation's writes: leases renewed, memories created, merged
    and retired, jobs marked, counters bumped) join the caller's `transaction()`."""

    def transaction(self) -> AbstractContextManager[None]:
        """Atomic, with the write lock taken up front; rolled back when the block raises."""

    def savepoint(self) -> AbstractContextManager[None]:
        """Inside a transaction: what the block writes is rolled back alone when it raises."""

    # --- jobs and leases -------------------------------------------------------
    def insert_job(
        self,
        owner: str,
        namespace: str,
        text: str,
        idempotency_key: str | None,
        now: float,
        occurred_at: float | None = None,
    ) -> tuple[Job, bool]:
        """The new job, or the earlier one with the same (owner, idempotency key) and True."""

    def insert_jobs(self, owner: str, requests: Sequence[JobRequest], now: float) -> list[tuple[Job, bool]]:
        """Each request filed as insert_job files one, all in one transaction, in order. Nothing
        is stored when a request's key was used for a job that differs from it in text,
        namespace, occurred_at, expires_at or supersedes (KeyReused names the request and field),
        or when a supersedes id is not a live memory of the owner (SupersedeUnknown, a NotFound,
        for an unknown or another owner's id; SupersedeRefused, an InvalidInput, for a forgotten,
        merged or superseded one), or one a queued job of the owner already supersedes
        (SupersedeRefused naming that job): each names the id and the request's index."""

    def insert_analysis(
        self, owner: str, namespace: str, text: str, facts: Sequence[JobRequest], now: float
    ) -> tuple[Job, list[tuple[Job, bool]]]:
        """An analyze request and the facts extracted from it, in one transaction: the request
        is a job holding the source text that is never curated (done, decision `ANALYZED`, no
        memory; forget_memory of its id erases the text), and each fact a job as insert_jobs
        files it, with `source_job_id` naming the request."""

    def claim_lane(self, holder: str, lease_s: float, now: float) -> Lane | None: ...

    def renew_lease(self, lane: int, holder: str, until: float) -> bool: ...

    def release_lease(self, lane: int, holder: str) -> None: ...

    def mark_done(self, job_id: str, decision: str, memory_id: str, now: float) -> None:
        """Raises JobWithdrawn when a forget erased the job meanwhile.

        The job's expiry and supersedes take effect on `memory_id`: decided `created`, the
        memory expires when the job says; otherwise it expires at the later of the two, never
        when either has no expiry. The live memories the job supersedes (`memory_id` itself
        excepted) are retired with `superseded_by` = memory_id, and memory_id gets a revision
        with its body unchanged, decision `superseded`, merged_ids naming them (undo of
        memory_id brings them back). Those it names but cannot supersede (no longer live:
        superseded, merged or forgotten meanwhile, or memory_id itself) are left as they are,
        and the job's `error` says which and why (`not superseded: m_… (m_… superseded it
        first)`): a done job's error is such a note, never a failure."""

    def mark_attempt_failed(self, job_id: str, error: str, retry_at: float | None, now: float) -> None: ...

    # --- memories --------------------------------------------------------------
    def create_memory(
        self,
        *,
        owner: str,
        namespace: str,
        lane: int,
        body: str,
        key: str,
        source_job_id: str,
        vector: np.ndarray | None,
        model_id: str | None,
        now: float,
        occurred_at: float | None = None,
        created_at: float | None = None,
    ) -> tuple[int, str]:
        """(pk, public id) of the new memory."""

    def add_occurrence(self, pk: int, now: float) -> None: ...

    def replace_body(
        self,
        *,
        pk: int,
        lane: int,
        body: str,
        key: str,
        vector: np.ndarray | None,
        model_id: str | None,
        decision: str,
        job_id: str | None,
        llm_model: str | None,
        guard: str | None,
        merged_ids: Sequence[str] = (),
        now: float,
    ) -> None:
        """A merge: the old body becomes a revision."""

    def retire(self, pk: int, into_id: str, now: float) -> None: ...

    def bump_counters(self, markers: Iterable[str]) -> None: ...

    def defer_nominations(self, pk: int, lane: int, job_id: str) -> None: ...

    def take_deferred_nominations(self, pks: Sequence[int]) -> set[int]: ...

    def ensure_vector_table(self, model_id: str, dim: int) -> str | None: ...

    def set_vectors(self, items: Sequence[tuple[int, int, str, np.ndarray]], model_id: str) -> int: ...

    def mark_unembeddable(self, pks: Sequence[int]) -> None: ...

    def forget_memory(self, owner: str, memory_id: str, retired_too: bool = False) -> Forgotten:
        """A superseded memory is forgotten on its own (its text is in no other body). Erasing a
        current memory that superseded others (it, or one merged into it) brings them back live as
        undoing the supersede does (`Forgotten.restored`); one past its expiry is no longer
        superseded either, but expired (`Forgotten.expired_back`), never left superseded by a
        memory that is gone. Erasing a memory superseded itself (the
        middle of a chain A <- B <- C) re-points what it superseded to what superseded it (A is
        superseded by C, and C's supersede revisions name A), so the chain stays one current fact."""

    def undo_last_change(self, owner: str, memory_id: str) -> Undone:
        """Undoing a supersede (the revision `superseded`) brings the memories it replaced back
        live, body unchanged, with a revision `unsuperseded`; undoing that supersedes them again.
        Undoing a body change restores the body and the expiry the memory had with it. An undo
        that would change nothing (none of the memories its last change names can be brought back
        or superseded again) raises InvalidInput naming why, and writes nothing."""

    # --- tokens, reindex, import -----------------------------------------------
    def insert_token(self, digest: str, owner: str, scopes: tuple[str, ...], label: str | None) -> None: ...

    def revoke_token(self, hash_prefix: str) -> list[str]: ...

    def reindex_begin(self, model_id: str, dim: int) -> ReindexState: ...

    def reindex_write(self, state: ReindexState, items: list[tuple[int, int, np.ndarray]]) -> int: ...

    def reindex_finish(self, state: ReindexState) -> tuple[int, int]: ...

    def import_rows(self, rows: Iterable[tuple[int, ImportRow]]) -> ImportOutcome:
        """Write (line, row) pairs of an export in one transaction, skipping rows already present.
        RecordRefused (nothing stored) for a row whose id another owner holds, or any id a row names
        -- a job's memory_id, source_job_id and supersedes, a memory's source_job_id, retired_into
        and superseded_by, a revision's job_id and merged_ids -- that is no record of the row's
        owner in the rows or the store. importing.py makes these decisions once for every backend."""

    # --- what a migration carries besides an export's records --------------------
    # Each a unit of work of its own; repeating one changes nothing (a resumed migration).
    def import_tokens(self, rows: Sequence[TokenRow]) -> tuple[int, int]:
        """Tokens kept as they are (hash, owner, scopes, label, created_at, revoked_at): (added,
        revoked here because the row says it was). A hash present here stays as it is, except
        that a revocation of the same owner's token is carried over; one is never un-revoked."""

    def merge_counters(self, counts: Mapping[str, int]) -> None:
        """Each curation counter raised to at least `counts[marker]` (never added twice)."""

    def import_deferred_nominations(self, items: Sequence[tuple[str, str, str]]) -> int:
        """Defer the nominee count of these (owner, memory id, job id) again, for memories live
        here; how many were added (one already deferred, or not live, is left out)."""


class Store(Protocol):
    @property
    def location(self) -> str:
        """Where the data lives, as a user would name it (a file path; a URL without password)."""

    def own_files(self) -> tuple[Path, ...]:
        """The files holding the data (an export or backup must never overwrite them)."""

    async def open(self) -> None:
        """Create or upgrade the schema; raise StoreUnavailable with a hint when it cannot."""

    async def close(self) -> None: ...

    async def read(self, fn: Callable[Concatenate[StoreReader, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `fn(reader, *args, **kwargs)` off the event loop on a reader."""

    async def write(self, fn: Callable[Concatenate[StoreWriter, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `fn(writer, *args, **kwargs)` off the event loop on the writer."""

    async def rate_grant(
        self, key: str, want: int, rate_per_s: float, burst: float, now: float
    ) -> tuple[int, float] | None:
        """Take up to `want` calls from `key`'s token bucket kept in the store: (granted, 0), or
        (0, seconds to wait). None from a store that one machine's servers use alone (SQLite),
        whose limits stay in each process; a store several replicas share keeps them here."""

    async def ping(self, timeout_s: float) -> None:
        """Raise StoreUnavailable unless the store answers a trivial read within `timeout_s`: a health
        check must say "down" promptly, where `read` may wait out a pool's longer patience."""

    @property
    def erasure_pending(self) -> bool:
        """True while a copy of forgotten text may survive outside the tables (a log)."""

    def owe_erasure(self) -> None:
        """A forget could not clear every copy yet: keep trying in the background."""

    @property
    def erasure_kept(self) -> str:
        """Where copies of erased text remain while a forget could not clear them (`wal_cleared`
        false), and what clears them: the engine's own files and mechanism, which every entry
        point names to the user the same way."""

    def erasure_rerun(self, command: str) -> str:
        """The same, said to a short-lived process that will not be there to retry (the CLI):
        where copies remain, who keeps them, and that running `command` again once that session
        has ended clears them."""

    def erasure_left(self, cleared: bool, already: bool) -> str | None:
        """What even a complete forget (`wal_cleared` true) cannot remove, in the engine's own
        files, and what an operator can do about it; None when nothing is left (SQLite: secure
        delete and an emptied log). Said as the forget found it: `cleared` is its `wal_cleared`,
        `already` that it erased nothing this time. Every forget reply says it, so none claims
        more than is true."""

    async def backup(self, target: Path, *, force: bool, verify: bool) -> BackupResult:
        """A consistent copy of the whole store in one file while servers keep writing; raises
        InvalidInput naming the right tool where the backend has its own (pg_dump)."""

    async def settle_erasure(self, wait_ms: int) -> bool:
        """Try to clear what a forget left behind, waiting up to `wait_ms`; True when nothing is left."""
