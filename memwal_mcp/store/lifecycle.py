"""Forget and undo: the two operations that change history on purpose.

Forget erases content -- the memory's body, its previous bodies, the text of every
job that ended in it, and of memories a CONSOLIDATE folded into it -- and leaves a
tombstone. With secure_delete on (connection.py) and FTS5's secure-delete option,
the erased text does not linger in free pages or in the full-text index; a TRUNCATE
checkpoint then removes the older copies the write-ahead log still holds.
Undo restores the body a memory had before its last change, as a new revision.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass, replace

from ..errors import InvalidInput, NotFound
from ..normalize import norm_key
from . import fts, memories
from .connection import BUSY_TIMEOUT_MS, truncate_wal
from .database import transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Forgotten:
    memory_ids: tuple[str, ...]  # the memory and those folded into it
    jobs: int
    wal_cleared: bool = True  # False: a reader kept the write-ahead log from being emptied


def _folded_into(conn: sqlite3.Connection, memory_id: str) -> list[tuple[int, str]]:
    """(rowid, id) of the memory and, recursively, of every memory retired into it."""
    found: list[tuple[int, str]] = []
    frontier = [memory_id]
    while frontier:
        marks = ",".join("?" * len(frontier))
        rows = conn.execute(
            f"SELECT rowid, id FROM memories WHERE id IN ({marks}) OR retired_into IN ({marks})",
            (*frontier, *frontier),
        ).fetchall()
        known = {mid for _, mid in found}
        fresh = [(rowid, mid) for rowid, mid in rows if mid not in known]
        found.extend(fresh)
        frontier = [mid for _, mid in fresh if mid not in frontier]
    return found


def forget_memory(conn: sqlite3.Connection, owner: str, memory_id: str) -> Forgotten:
    """Erase the memory and what it holds in one transaction, then empty the write-ahead log,
    so that when this returns no file holds the text (a SIGKILL right after changes nothing)."""
    done = _erase(conn, owner, memory_id)
    cleared = truncate_wal(conn)
    if not cleared:
        log.warning(
            "forgot %s, but another connection to this database kept its write-ahead log from being emptied "
            "within %.0f s: earlier copies of the text stay in the -wal file until the next checkpoint "
            "(the next write of this server, or the last connection closing, retries it)",
            memory_id, BUSY_TIMEOUT_MS / 1000,
        )
    return replace(done, wal_cleared=cleared)


def _erase(conn: sqlite3.Connection, owner: str, memory_id: str) -> Forgotten:
    with transaction(conn):
        row = conn.execute(
            "SELECT namespace, status, lane_id FROM memories WHERE owner = ? AND id = ?", (owner, memory_id)
        ).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        namespace, status, lane = row
        if status == "forgotten":
            jobs = conn.execute("SELECT jobs FROM forgotten WHERE memory_id = ?", (memory_id,)).fetchone()
            return Forgotten((memory_id,), jobs[0] if jobs else 0)
        targets = _folded_into(conn, memory_id)
        ids = [mid for _, mid in targets]
        rowids = [rowid for rowid, _ in targets]
        id_marks = ",".join("?" * len(ids))
        row_marks = ",".join("?" * len(rowids))
        now = time.time()
        jobs = conn.execute(
            f"UPDATE remember_jobs SET text = '', decision = 'forgotten', error = NULL, updated_at = ?"
            f" WHERE owner = ? AND memory_id IN ({id_marks})",
            (now, owner, *ids),
        ).rowcount
        conn.execute(f"DELETE FROM memory_revisions WHERE memory_rowid IN ({row_marks})", rowids)
        conn.execute(f"DELETE FROM deferred_nominations WHERE memory_rowid IN ({row_marks})", rowids)
        # Memories folded together belong to one owner, so one full-text table holds them all.
        fts.remove(conn, lane, rowids, optimize=not fts.secure_delete_supported(conn))
        table = memories.vector_table(conn)
        if table is not None:
            conn.execute(f"DELETE FROM {table} WHERE rowid IN ({row_marks})", rowids)
        conn.execute(
            f"UPDATE memories SET body = '', norm_key = '', status = 'forgotten', vector_model = NULL,"
            f" updated_at = ? WHERE rowid IN ({row_marks})",
            (now, *rowids),
        )
        conn.executemany(
            "INSERT OR REPLACE INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (?, ?, ?, ?, ?)",
            [(mid, owner, namespace, jobs if mid == memory_id else 0, now) for mid in ids],
        )
    return Forgotten(tuple(ids), jobs)


def undo_last_change(conn: sqlite3.Connection, owner: str, memory_id: str) -> tuple[str, list[str]]:
    """Restore the body before the last change as a new revision; un-retire what that change folded in.

    Returns (restored body, ids of memories brought back). Restored memories get their vectors
    from the curation worker's backlog pass; recall scores them directly until then.
    """
    with transaction(conn):
        found = memories.memory_by_id(conn, owner, memory_id)
        if found is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        row, status, _ = found
        if status != "live":
            raise InvalidInput(f"memory {memory_id!r} is {status}; only a live memory can be undone")
        history = memories.revisions(conn, row.rowid)
        if not history:
            raise InvalidInput(f"memory {memory_id!r} has no change to undo")
        # The newest previous body comes back; undoing an undo therefore redoes.
        undoable = history[0]
        memories.replace_body(
            conn, rowid=row.rowid, lane=row.lane, body=undoable.body, key=norm_key(undoable.body),
            vector=None, model_id=None, decision="undone", job_id=undoable.job_id, llm_model=None,
            guard=None, merged_ids=(), now=time.time(),
        )
        restored: list[str] = []
        for retired_id in (undoable.merged_ids or "").split(","):
            if retired_id and memories.unretire(conn, owner, retired_id, memory_id):
                restored.append(retired_id)
    return undoable.body, restored
