"""The SQLite backend's StoreReader and StoreWriter: the contract's sync faces over one connection.

Each method is a thin call into the module that owns the concept (jobs, memories, fts, ...),
so those modules keep their SQL next to the schema it reads, and the contract stays the only
thing the layers above see. A view lives for one unit of work on the connection's thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager

import numpy as np

from ...records import Job, Revision
from .. import importing
from ..contract import TextMatch, VectorSearch
from ..records import (
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
from . import (
    carried,
    fts,
    integrity,
    jobs,
    lifecycle,
    memories,
    reindex,
    revisions,
    tokens,
    transfer_export,
    transfer_import,
    unindexed_fts,
    vectors,
)
from .database import transaction
from .row_cache import RowCache


class SQLiteReader:
    __slots__ = ("conn", "rows")

    def __init__(self, conn: sqlite3.Connection, rows: RowCache | None = None) -> None:
        self.conn = conn
        self.rows = rows  # the reader connection's (row_cache.py); a writer reads its own transaction

    # --- vectors ---------------------------------------------------------------
    def vector_model(self) -> tuple[str, int] | None:
        return vectors.vector_model(self.conn)

    def vector_search(self, lane: int) -> VectorSearch:
        return vectors.vector_search(self.conn, lane)

    def cosines(self, lane: int, query: np.ndarray, pks: Sequence[int]) -> dict[int, float]:
        return vectors.cosines(self.conn, lane, query, pks)

    def vectors_of(self, lane: int, pks: Sequence[int]) -> dict[int, np.ndarray]:
        return vectors.lane_vectors_of(self.conn, lane, pks)

    def unembedded(self, limit: int) -> list[tuple[int, int, str]]:
        return vectors.unembedded(self.conn, limit)

    def unembedded_in_lane(self, lane: int, limit: int) -> list[MemoryRow]:
        return memories.unembedded_in_lane(self.conn, lane, limit)

    # --- words -----------------------------------------------------------------
    def text_search(self, lanes: Sequence[int], terms: Sequence[str], limit: int) -> tuple[list[TextMatch], bool]:
        if not terms:
            return [], True
        found, exhausted = fts.search(self.conn, lanes, fts.match_expression(terms), limit)
        return [TextMatch(pk, -bm25) for pk, bm25 in found], exhausted

    def text_strengths(self, lanes: Sequence[int], terms: Sequence[str], pks: Sequence[int]) -> dict[int, float]:
        if not terms or not pks:
            return {}
        found = unindexed_fts.bm25_of_rows(self.conn, lanes, fts.match_expression(terms), pks)
        return {pk: -bm25 for pk, bm25 in found.items()}

    def score_queued(
        self, lanes: Sequence[int], terms: Sequence[str], texts: Sequence[QueuedText], repeats_fold: bool
    ) -> Scored:
        return unindexed_fts.score_queued(self.conn, lanes, terms, texts, repeats_fold)

    def lane_totals(self, lanes: Sequence[int]) -> dict[int, tuple[int, int]]:
        return memories.lane_totals(self.conn, lanes)

    # --- memories --------------------------------------------------------------
    def memories_by_pk(self, pks: Sequence[int]) -> dict[int, MemoryRow]:
        if self.rows is None:
            return memories.memories_by_rowid(self.conn, pks)
        return self.rows.rows(self.conn, pks, memories.memories_by_rowid)

    def adjacent(self, pks: Sequence[int]) -> dict[int, tuple[MemoryRow | None, MemoryRow | None]]:
        return memories.adjacent(self.conn, pks)

    def memory_by_id(self, owner: str, memory_id: str) -> tuple[MemoryRow, str, str | None] | None:
        return memories.memory_by_id(self.conn, owner, memory_id)

    def live_by_norm_key(self, lane: int, key: str) -> list[tuple[int, str, str]]:
        return memories.live_by_norm_key(self.conn, lane, key)

    def live_norm_keys(self, lane: int, keys: Iterable[str]) -> set[str]:
        return memories.live_norm_keys(self.conn, lane, keys)

    def copies_by_key(
        self,
        lanes: Sequence[int],
        keys: Iterable[str],
        since: float | None = None,
        until: float | None = None,
        live_at: float | None = None,
        superseded: bool = False,
    ) -> dict[str, KeyCopies]:
        return memories.copies_by_key(self.conn, lanes, keys, since, until, live_at, superseded)

    def repeats_in_window(self, pks: Sequence[int], since: float | None, until: float | None) -> dict[int, float]:
        return memories.repeats_in_window(self.conn, pks, since, until)

    def copies_of(self, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
        return lifecycle.copies_of(self.conn, owner, lanes, keys)

    def revisions(self, pk: int) -> list[Revision]:
        return revisions.revisions(self.conn, pk)

    def retired_into(self, owner: str, memory_id: str) -> list[str]:
        return revisions.retired_into(self.conn, owner, memory_id)

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
        return memories.list_memories(
            self.conn, owner, namespace, before, since, limit, live_at, superseded, until, expired_by, superseded_only
        )

    def expired_memories(self, owner: str, now: float, limit: int) -> list[str]:
        return memories.expired_memories(self.conn, owner, now, limit)

    def superseded_in(self, lanes: Sequence[int], limit: int) -> list[MemoryRow]:
        return memories.superseded_in(self.conn, lanes, limit)

    def superseded_by(self, owner: str, memory_id: str) -> list[str]:
        return revisions.superseded_by(self.conn, owner, memory_id)

    def counters(self) -> dict[str, int]:
        return memories.counters(self.conn)

    def deferred_nominations(self, limit: int) -> tuple[int, list[tuple[int, str]]] | None:
        return memories.deferred_nominations(self.conn, limit)

    def deferred_nomination_count(self) -> int:
        return memories.deferred_nomination_count(self.conn)

    def deferred_nomination_ids(self) -> list[tuple[str, str, str]]:
        return carried.deferred_nomination_ids(self.conn)

    # --- jobs and lanes --------------------------------------------------------
    def owner_lanes(self, owner: str) -> list[Lane]:
        return jobs.owner_lanes(self.conn, owner)

    def live_count(self, lane: int) -> int:
        return jobs.live_count(self.conn, lane)

    def jobs_by_id(self, owner: str, job_ids: Sequence[str]) -> dict[str, Job]:
        return jobs.jobs_by_id(self.conn, owner, job_ids)

    def jobs_for_memories(self, owner: str, memory_ids: Sequence[str]) -> list[Job]:
        return jobs.jobs_for_memories(self.conn, owner, memory_ids)

    def extracted_from(self, owner: str, request_id: str) -> list[Job]:
        return jobs.extracted_from(self.conn, owner, request_id)

    def queued_fairly(self, lanes: Sequence[int], max_chars: int, max_jobs: int) -> list[QueuedJob]:
        return jobs.queued_fairly(self.conn, lanes, max_chars, max_jobs)

    def still_queued(self, job_ids: Sequence[str]) -> set[str]:
        return jobs.still_queued(self.conn, job_ids)

    def queued_mark(self, lanes: Sequence[int]) -> int | None:
        return jobs.queued_mark(self.conn, lanes)

    def queued_through(self, lanes: Sequence[int], mark: int) -> bool:
        return jobs.queued_through(self.conn, lanes, mark)

    def queue_counts(self) -> dict[str, int]:
        return jobs.queue_counts(self.conn)

    def journal_counts(self, owner: str, first: float) -> list[JournalCount]:
        return jobs.journal_counts(self.conn, owner, first)

    def has_due_jobs(self, now: float) -> bool:
        return jobs.has_due_jobs(self.conn, now)

    def next_batch(self, lane: int, limit: int, now: float, after_seq: int = 0) -> list[QueuedJob]:
        return jobs.next_batch(self.conn, lane, limit, now, after_seq)

    # --- tokens ----------------------------------------------------------------
    def token_by_hash(self, digest: str) -> TokenRow | None:
        return tokens.token_by_hash(self.conn, digest)

    def list_tokens(self) -> list[TokenRow]:
        return tokens.list_tokens(self.conn)

    def count_active_tokens(self) -> int:
        return tokens.count_active(self.conn)

    # --- reindex, integrity, export --------------------------------------------
    def reindex_done_upto(self, mark: int) -> int:
        return reindex.done_upto(self.conn, mark)

    def reindex_remaining(self, after: int) -> int:
        return reindex.remaining(self.conn, after)

    def reindex_batch(self, after: int, limit: int) -> list[tuple[int, int, str]]:
        return reindex.next_batch(self.conn, after, limit)

    def unembedded_count(self, owners: Sequence[str] | None) -> int:
        return transfer_import.unembedded_count(self.conn, owners)

    def check(self) -> tuple[list[Problem], StoreCounts]:
        return integrity.check_store(self.conn, repair=True)

    def created_at(self) -> float | None:
        return integrity.created_at(self.conn)

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        with transfer_export.read_snapshot(self.conn):
            yield

    def snapshot(self) -> AbstractContextManager[None]:
        return self._snapshot()

    def export_counts(self, owner: str | None) -> dict[Kind, int]:
        return transfer_export.export_counts(self.conn, owner)

    def exported_owners(self, owner: str | None) -> list[str]:
        return transfer_export.exported_owners(self.conn, owner)

    def iter_lanes(self, owner: str | None) -> Iterator[LaneRow]:
        return transfer_export.iter_lanes(self.conn, owner)

    def iter_jobs(self, owner: str | None) -> Iterator[Job]:
        return transfer_export.iter_jobs(self.conn, owner)

    def iter_memories(self, owner: str | None) -> Iterator[MemoryRecord]:
        return transfer_export.iter_memories(self.conn, owner)

    def iter_revisions(self, owner: str | None) -> Iterator[RevisionRow]:
        return transfer_export.iter_revisions(self.conn, owner)

    def iter_tombstones(self, owner: str | None) -> Iterator[TombstoneRow]:
        return transfer_export.iter_tombstones(self.conn, owner)


class SQLiteWriter(SQLiteReader):
    __slots__ = ()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with transaction(self.conn):
            yield

    def transaction(self) -> AbstractContextManager[None]:
        return self._transaction()

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self.conn.execute("SAVEPOINT job")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO job")
            self.conn.execute("RELEASE job")
            raise
        self.conn.execute("RELEASE job")

    def savepoint(self) -> AbstractContextManager[None]:
        return self._savepoint()

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
        return jobs.insert_job(self.conn, owner, namespace, text, idempotency_key, now, occurred_at)

    def insert_jobs(self, owner: str, requests: Sequence[JobRequest], now: float) -> list[tuple[Job, bool]]:
        return jobs.insert_jobs(self.conn, owner, requests, now)

    def insert_analysis(
        self, owner: str, namespace: str, text: str, facts: Sequence[JobRequest], now: float
    ) -> tuple[Job, list[tuple[Job, bool]]]:
        return jobs.insert_analysis(self.conn, owner, namespace, text, facts, now)

    def claim_lane(self, holder: str, lease_s: float, now: float) -> Lane | None:
        return jobs.claim_lane(self.conn, holder, lease_s, now)

    def renew_lease(self, lane: int, holder: str, until: float) -> bool:
        return jobs.renew_lease(self.conn, lane, holder, until)

    def release_lease(self, lane: int, holder: str) -> None:
        jobs.release_lease(self.conn, lane, holder)

    def mark_done(self, job_id: str, decision: str, memory_id: str, now: float) -> None:
        jobs.mark_done(self.conn, job_id, decision, memory_id, now)

    def mark_attempt_failed(self, job_id: str, error: str, retry_at: float | None, now: float) -> None:
        jobs.mark_attempt_failed(self.conn, job_id, error, retry_at, now)

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
        return memories.create_memory(
            self.conn,
            owner=owner,
            namespace=namespace,
            lane=lane,
            body=body,
            key=key,
            source_job_id=source_job_id,
            vector=vector,
            model_id=model_id,
            now=now,
            occurred_at=occurred_at,
            created_at=created_at,
        )

    def add_occurrence(self, pk: int, now: float) -> None:
        memories.add_occurrence(self.conn, pk, now)

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
        revisions.replace_body(
            self.conn,
            rowid=pk,
            lane=lane,
            body=body,
            key=key,
            vector=vector,
            model_id=model_id,
            decision=decision,
            job_id=job_id,
            llm_model=llm_model,
            guard=guard,
            merged_ids=merged_ids,
            now=now,
        )

    def retire(self, pk: int, into_id: str, now: float) -> None:
        revisions.retire(self.conn, pk, into_id, now)

    def bump_counters(self, markers: Iterable[str]) -> None:
        memories.bump_counters(self.conn, markers)

    def defer_nominations(self, pk: int, lane: int, job_id: str) -> None:
        memories.defer_nominations(self.conn, pk, lane, job_id)

    def take_deferred_nominations(self, pks: Sequence[int]) -> set[int]:
        return memories.take_deferred_nominations(self.conn, pks)

    def ensure_vector_table(self, model_id: str, dim: int) -> str | None:
        return vectors.ensure_vector_table(self.conn, model_id, dim)

    def set_vectors(self, items: Sequence[tuple[int, int, str, np.ndarray]], model_id: str) -> int:
        return vectors.set_vectors(self.conn, items, model_id)

    def mark_unembeddable(self, pks: Sequence[int]) -> None:
        vectors.mark_unembeddable(self.conn, pks)

    def forget_memory(self, owner: str, memory_id: str, retired_too: bool = False) -> Forgotten:
        return lifecycle.forget_memory(self, self.conn, owner, memory_id, retired_too)

    def undo_last_change(self, owner: str, memory_id: str) -> Undone:
        return lifecycle.undo_last_change(self, self.conn, owner, memory_id)

    # --- tokens, reindex, import -----------------------------------------------
    def insert_token(self, digest: str, owner: str, scopes: tuple[str, ...], label: str | None) -> None:
        tokens.insert_token(self.conn, digest, owner, scopes, label)

    def revoke_token(self, hash_prefix: str) -> list[str]:
        return tokens.revoke_token(self.conn, hash_prefix)

    def reindex_begin(self, model_id: str, dim: int) -> ReindexState:
        return reindex.begin(self.conn, model_id, dim)

    def reindex_write(self, state: ReindexState, items: list[tuple[int, int, np.ndarray]]) -> int:
        return reindex.write_batch(self.conn, state, items)

    def reindex_finish(self, state: ReindexState) -> tuple[int, int]:
        return reindex.finish(self.conn, state)

    def import_rows(self, rows: Iterable[tuple[int, ImportRow]]) -> ImportOutcome:
        return importing.import_rows(self, transfer_import.SQLiteImport(self.conn), rows)

    def import_tokens(self, rows: Sequence[TokenRow]) -> tuple[int, int]:
        return carried.import_tokens(self.conn, rows)

    def merge_counters(self, counts: Mapping[str, int]) -> None:
        carried.merge_counters(self.conn, counts)

    def import_deferred_nominations(self, items: Sequence[tuple[str, str, str]]) -> int:
        return carried.import_deferred_nominations(self.conn, items)
