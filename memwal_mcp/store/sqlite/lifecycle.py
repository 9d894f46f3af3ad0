"""Forget and undo on SQLite: the statements (store/lifecycle.py makes every decision, for every
backend), and how the erased bytes go.

With secure_delete on (connection.py) and FTS5's secure-delete option, the erased text does not
linger in free pages or in the full-text index; a TRUNCATE checkpoint after the forget's
transaction removes the older copies the write-ahead log still holds.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ...normalize import norm_key
from ...records import SUPERSEDED, UNSUPERSEDED
from .. import lifecycle
from ..contract import StoreWriter
from ..lifecycle import FoldedJob, JobState
from ..records import Forgotten, MemoryRow, StoredCopy, Undone, ids_of
from ..shown import with_ctes
from . import fts, memories, revisions, vectors
from .connection import BUSY_TIMEOUT_MS, kept_copies, truncate_wal

log = logging.getLogger(__name__)

# How long a forget of something already forgotten waits for the checkpoint (a writer's commit).
ALREADY_WAIT_MS = 200


def copies_of(conn: sqlite3.Connection, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
    """Every memory of the owner in the lanes whose normalized text has one of the norm_key()s --
    live, expired or superseded: each still holds the text -- and every queued job: what recall
    collapsed into one hit, so what a forget of that hit must erase, or the fact comes straight
    back. A memory merged into another is not a copy: its text lives on in that body, and
    forgetting that memory erases it. A live one a queued correction supersedes is read as recall
    reads it, `superseded_by` that job (store/shown.py)."""
    wanted = set(keys)
    if not wanted or not lanes:
        return []
    lane_marks = ",".join("?" * len(lanes))
    shown = memories.reading_of(conn)
    found = [
        StoredCopy.of(MemoryRow(*row))
        for row in conn.execute(
            f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join} WHERE owner = ?"
            f" AND (status = 'live' OR (status = 'retired' AND memories.superseded_by IS NOT NULL))"
            f" AND lane_id IN ({lane_marks}) AND norm_key IN ({','.join('?' * len(wanted))})"
            " ORDER BY memories.created_at, memories.id",
            (owner, *lanes, *wanted),
        )
    ]
    for job_id, text, expires_at in conn.execute(
        f"SELECT id, text, expires_at FROM remember_jobs WHERE owner = ? AND status = 'queued'"
        f" AND lane_id IN ({lane_marks}) ORDER BY seq",
        (owner, *lanes),
    ):
        key = norm_key(text)
        if key in wanted:
            found.append(StoredCopy(job_id, key, text, expires_at))
    return found


def forget_memory(
    writer: StoreWriter, conn: sqlite3.Connection, owner: str, memory_id: str, retired_too: bool = False
) -> Forgotten:
    """Erase the memory and what it holds in one transaction, then empty the write-ahead log,
    so that when this returns no file holds the text (a SIGKILL right after changes nothing).
    A reader on an older snapshot can keep the log from being emptied within the bounded wait:
    `wal_cleared` is then False and the caller must say so and retry (Database.owe_wal_truncation)."""
    target = SQLiteLifecycle(conn)
    done = lifecycle.forget(writer, target, owner, memory_id, retired_too)
    for table, lane, pks in target.erased_vectors:  # after the commit: a big lane's sidecar file holds them too
        vectors.erase_from_file(conn, table, lane, pks)
    if done.already:
        # Forgetting again is what the warning tells a user to do once the reader is done: its
        # answer must say whether the old pages are gone by now, not assume so. Briefly: nothing
        # was erased this time, and an earlier forget waited already.
        return replace(done, wal_cleared=truncate_wal(conn, ALREADY_WAIT_MS))
    cleared = truncate_wal(conn)
    if not cleared:
        log.warning(
            "forgot %s, but the write-ahead log could not be checkpointed within %.0f s: %s",
            memory_id,
            BUSY_TIMEOUT_MS / 1000,
            kept_copies(Path(conn.execute("PRAGMA database_list").fetchone()[2])),
        )
    return replace(done, wal_cleared=cleared)


def undo_last_change(writer: StoreWriter, conn: sqlite3.Connection, owner: str, memory_id: str) -> Undone:
    return lifecycle.undo_last_change(writer, SQLiteLifecycle(conn), owner, memory_id)


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


_ERASE_JOB = "text = '', decision = 'forgotten', error = NULL, idempotency_key = NULL, updated_at = ?"


class SQLiteLifecycle:
    """lifecycle.LifecycleTarget over the writer's connection, inside its transaction."""

    __slots__ = ("conn", "erased_vectors")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # (vector table, lane, rowids) whose rows forget_memory must also zero in the lane's
        # sidecar file (matrix_file) once the transaction has committed.
        self.erased_vectors: list[tuple[str, int, list[int]]] = []

    def folded_rows(self, owner: str, ids: Sequence[str]) -> list[tuple[int, str]]:
        marks = _marks(ids)
        return [
            (int(rowid), mid)
            for rowid, mid in self.conn.execute(
                f"SELECT rowid, id FROM memories WHERE owner = ? AND (id IN ({marks}) OR retired_into IN ({marks}))"
                " ORDER BY rowid",
                (owner, *ids, *ids),
            )
        ]

    def erased_texts(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, str]]:
        rows, marks = _marks(pks), _marks(ids)
        return self.conn.execute(
            f"SELECT lane_id, body FROM memories WHERE rowid IN ({rows})"
            f" UNION ALL SELECT m.lane_id, r.body FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
            f"  WHERE r.memory_rowid IN ({rows})"
            f" UNION ALL SELECT lane_id, text FROM remember_jobs WHERE owner = ? AND memory_id IN ({marks})",
            (*pks, *pks, owner, *ids),
        ).fetchall()

    def queued_texts(self, lanes: Sequence[int]) -> list[tuple[int, int, str]]:
        return self.conn.execute(
            f"SELECT seq, lane_id, text FROM remember_jobs WHERE lane_id IN ({_marks(lanes)}) AND status = 'queued'",
            tuple(lanes),
        ).fetchall()

    def job_state(self, owner: str, job_id: str) -> JobState | None:
        row = self.conn.execute(
            "SELECT seq, lane_id, text, decision, memory_id, CASE WHEN status = 'queued' THEN supersedes END"
            " FROM remember_jobs WHERE owner = ? AND id = ?",
            (owner, job_id),
        ).fetchone()
        return None if row is None else JobState(row[0], row[1], row[2], row[3], row[4], ids_of(row[5]))

    def merge_spans(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, int, int]]:
        job_ids = [
            j
            for (j,) in self.conn.execute(
                f"SELECT id FROM remember_jobs WHERE owner = ? AND memory_id IN ({_marks(ids)})", (owner, *ids)
            )
        ]
        if not job_ids:
            return []
        spans = self.conn.execute(
            f"SELECT memory_rowid, MIN(id), MAX(id) FROM memory_revisions WHERE job_id IN ({_marks(job_ids)})"
            " GROUP BY memory_rowid",
            job_ids,
        ).fetchall()
        erased = set(pks)
        return [(pk, first, last) for pk, first, last in spans if pk not in erased]

    def drop_revisions(self, memory_pk: int, first: int, last: int) -> None:
        self.conn.execute(
            "DELETE FROM memory_revisions WHERE memory_rowid = ? AND id BETWEEN ? AND ?", (memory_pk, first, last)
        )

    def erase_jobs_of(self, owner: str, ids: Sequence[str], now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB} WHERE owner = ? AND memory_id IN ({_marks(ids)})",
            (now, owner, *ids),
        ).rowcount

    def erase_queued(self, seqs: Sequence[int], memory_id: str | None, now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done', memory_id = COALESCE(?, memory_id)"
            f" WHERE status = 'queued' AND seq IN ({_marks(seqs)})",
            (now, memory_id, *seqs),
        ).rowcount

    def erase_job(self, owner: str, job_id: str, now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done' WHERE owner = ? AND id = ?", (now, owner, job_id)
        ).rowcount

    def erase_memories(self, lane: int, pks: Sequence[int], now: float) -> None:
        conn, rows = self.conn, _marks(pks)
        conn.execute(f"DELETE FROM memory_revisions WHERE memory_rowid IN ({rows})", tuple(pks))
        conn.execute(f"DELETE FROM deferred_nominations WHERE memory_rowid IN ({rows})", tuple(pks))
        fts.remove(conn, lane, list(pks), optimize=not fts.secure_delete_supported(conn))
        table = vectors.vector_table(conn)
        if table is not None:
            conn.execute(f"DELETE FROM {table} WHERE rowid IN ({rows})", tuple(pks))
            self.erased_vectors.append((table, lane, list(pks)))
        conn.execute(
            f"UPDATE memories SET body = '', norm_key = '', status = 'forgotten', vector_model = NULL,"
            f" updated_at = ? WHERE rowid IN ({rows})",
            (now, *pks),
        )

    def add_tombstones(self, owner: str, namespace: str, rows: Sequence[tuple[str, int]], now: float) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (?, ?, ?, ?, ?)",
            [(mid, owner, namespace, jobs, now) for mid, jobs in rows],
        )

    def superseders(self, owner: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        return self.conn.execute(
            f"SELECT id, superseded_by FROM memories WHERE owner = ? AND id IN ({_marks(ids)})"
            " AND superseded_by IS NOT NULL ORDER BY rowid",
            (owner, *ids),
        ).fetchall()

    def superseded_by_any(self, owner: str, by_ids: Sequence[str], live_at: float | None) -> list[tuple[str, str]]:
        return self.conn.execute(
            f"SELECT id, superseded_by FROM memories WHERE owner = ? AND status = 'retired'"
            f" AND superseded_by IN ({_marks(by_ids)}) AND (? IS NULL OR expires_at IS NULL OR expires_at > ?)"
            " ORDER BY rowid",
            (owner, *by_ids, live_at, live_at),
        ).fetchall()

    def repoint(self, owner: str, from_id: str, to_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE owner = ? AND status = 'retired'"
            " AND superseded_by = ?",
            (to_id, now, owner, from_id),
        )

    def supersede_notes(self, owner: str, memory_id: str) -> list[tuple[int, tuple[str, ...]]]:
        rows = self.conn.execute(
            "SELECT r.id, r.merged_ids FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
            " WHERE m.owner = ? AND m.id = ? AND r.decision IN (?, ?) ORDER BY r.id",
            (owner, memory_id, SUPERSEDED, UNSUPERSEDED),
        ).fetchall()
        return [(int(rid), tuple(merged.split(",")) if merged else ()) for rid, merged in rows]

    def rename_note(self, revision_id: int, merged_ids: Sequence[str]) -> None:
        self.conn.execute(
            "UPDATE memory_revisions SET merged_ids = ? WHERE id = ?", (",".join(merged_ids) or None, revision_id)
        )

    def supersede(self, owner: str, ids: Sequence[str], by_id: str, job_id: str | None, now: float) -> list[str]:
        return revisions.supersede(self.conn, owner, ids, by_id, job_id, now)

    def unsupersede(self, owner: str, memory_id: str, by_id: str) -> bool:
        return revisions.unsupersede(self.conn, owner, memory_id, by_id)

    def unretire(self, owner: str, memory_id: str, from_id: str) -> bool:
        return revisions.unretire(self.conn, owner, memory_id, from_id)

    def note(
        self, owner: str, memory_id: str, decision: str, job_id: str | None, merged_ids: Sequence[str], now: float
    ) -> None:
        revisions.note(self.conn, owner, memory_id, decision, job_id, merged_ids, now)

    def set_expiry(self, pk: int, expires_at: float | None) -> None:
        self.conn.execute("UPDATE memories SET expires_at = ? WHERE rowid = ?", (expires_at, pk))

    def folded_job(self, owner: str, memory_id: str, job_id: str) -> FoldedJob | None:
        row = self.conn.execute(
            "SELECT namespace, lane_id, text, occurred_at, created_at, expires_at FROM remember_jobs"
            " WHERE id = ? AND owner = ? AND memory_id = ? AND status = 'done' AND text != ''",
            (job_id, owner, memory_id),
        ).fetchone()
        return None if row is None else FoldedJob(*row)

    def point_job(self, job_id: str, memory_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE remember_jobs SET decision = 'created', memory_id = ?, updated_at = ? WHERE id = ?",
            (memory_id, now, job_id),
        )
