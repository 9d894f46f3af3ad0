"""A memory's body after it was made: merges, consolidations, undo, and the revisions they keep.

An UPDATE, CONSOLIDATE or APPEND gives a memory a new body and keeps the old one as a
revision; CONSOLIDATE also retires the memories folded in (their rows and history stay, they
leave the indexes), and undo brings them back. Every such change is an index change too
(full-text row, vector row), so it is made here in one place, inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

import numpy as np

from ...records import SUPERSEDED, Revision
from . import fts
from .vectors import _blob, vector_table

# --- merges (LLM tier) -----------------------------------------------------


def replace_body(
    conn: sqlite3.Connection,
    *,
    rowid: int,
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
    """Give a memory a new body, keeping the old one as a revision; re-index it."""
    old_body, old_expiry = conn.execute("SELECT body, expires_at FROM memories WHERE rowid = ?", (rowid,)).fetchone()
    conn.execute(
        "INSERT INTO memory_revisions"
        " (memory_rowid, body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, old_body, decision, job_id, llm_model, guard, ",".join(merged_ids) or None, now, old_expiry),
    )
    conn.execute(
        "UPDATE memories SET body = ?, norm_key = ?, vector_model = ?, updated_at = ? WHERE rowid = ?",
        (body, key, model_id if vector is not None else None, now, rowid),
    )
    fts.replace(conn, lane, rowid, body)
    table = vector_table(conn)
    if table is not None:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        if vector is not None:
            conn.execute(
                f"INSERT INTO {table} (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, _blob(vector))
            )


def retire(conn: sqlite3.Connection, rowid: int, into_id: str, now: float) -> None:
    """Fold a memory into another (CONSOLIDATE): its body and history stay, it leaves the indexes."""
    (lane,) = conn.execute("SELECT lane_id FROM memories WHERE rowid = ?", (rowid,)).fetchone()
    conn.execute(
        "UPDATE memories SET status = 'retired', retired_into = ?, updated_at = ? WHERE rowid = ? AND status = 'live'",
        (into_id, now, rowid),
    )
    fts.remove(conn, lane, [rowid])
    table = vector_table(conn)
    if table is not None:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


def revisions(conn: sqlite3.Connection, rowid: int) -> list[Revision]:
    """Previous bodies, newest first."""
    rows = conn.execute(
        "SELECT body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at FROM memory_revisions"
        " WHERE memory_rowid = ? ORDER BY id DESC",
        (rowid,),
    ).fetchall()
    return [
        Revision(
            body, decision, job_id, llm_model, guard, tuple(merged.split(",")) if merged else (), created_at, expiry
        )
        for body, decision, job_id, llm_model, guard, merged, created_at, expiry in rows
    ]


def retired_into(conn: sqlite3.Connection, owner: str, memory_id: str) -> list[str]:
    """Ids of the owner's memories a CONSOLIDATE folded into this one (directly)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM memories WHERE owner = ? AND retired_into = ? ORDER BY rowid", (owner, memory_id)
        )
    ]


def unretire(conn: sqlite3.Connection, owner: str, memory_id: str, from_id: str) -> bool:
    """Bring back a memory a CONSOLIDATE retired into `from_id`; it is re-indexed, its vector comes later."""
    row = conn.execute(
        "SELECT rowid, body, lane_id FROM memories WHERE owner = ? AND id = ? AND status = 'retired' AND retired_into = ?",
        (owner, memory_id, from_id),
    ).fetchone()
    if row is None:
        return False
    rowid, body, lane = row
    conn.execute(
        "UPDATE memories SET status = 'live', retired_into = NULL, vector_model = NULL, updated_at = ? WHERE rowid = ?",
        (time.time(), rowid),
    )
    fts.add(conn, lane, rowid, body)
    return True


# --- supersede ---------------------------------------------------------------


def supersede(
    conn: sqlite3.Connection, owner: str, memory_ids: Sequence[str], by_id: str, job_id: str | None, now: float
) -> list[str]:
    """Retire the owner's live memories among `memory_ids` as replaced by `by_id` (any namespace of
    the owner): body and history stay, they leave the indexes, and `by_id` gets a revision naming
    them, so undoing it brings them back. Returns those superseded (one merged or forgotten since
    the fact was filed is left as it is)."""
    done: list[str] = []
    for memory_id in dict.fromkeys(memory_ids):
        row = conn.execute(
            "SELECT rowid, lane_id FROM memories WHERE owner = ? AND id = ? AND status = 'live' AND id != ?",
            (owner, memory_id, by_id),
        ).fetchone()
        if row is None:
            continue
        rowid, lane = row
        conn.execute(
            "UPDATE memories SET status = 'retired', superseded_by = ?, updated_at = ? WHERE rowid = ?",
            (by_id, now, rowid),
        )
        fts.remove(conn, lane, [rowid])
        table = vector_table(conn)
        if table is not None:
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        done.append(memory_id)
    if done:
        note(conn, owner, by_id, SUPERSEDED, job_id, done, now)
    return done


def unsupersede(conn: sqlite3.Connection, owner: str, memory_id: str, by_id: str) -> bool:
    """Bring back a memory `by_id` superseded; re-indexed, its vector comes from the worker's backlog pass."""
    row = conn.execute(
        "SELECT rowid, body, lane_id FROM memories WHERE owner = ? AND id = ? AND status = 'retired'"
        " AND superseded_by = ?",
        (owner, memory_id, by_id),
    ).fetchone()
    if row is None:
        return False
    rowid, body, lane = row
    conn.execute(
        "UPDATE memories SET status = 'live', superseded_by = NULL, vector_model = NULL, updated_at = ?"
        " WHERE rowid = ?",
        (time.time(), rowid),
    )
    fts.add(conn, lane, rowid, body)
    return True


def note(
    conn: sqlite3.Connection,
    owner: str,
    memory_id: str,
    decision: str,
    job_id: str | None,
    merged_ids: Sequence[str],
    now: float,
) -> None:
    """A revision for a change that leaves the body as it is (a supersede, or its undo)."""
    conn.execute(
        "INSERT INTO memory_revisions (memory_rowid, body, decision, job_id, merged_ids, created_at, expires_at)"
        " SELECT rowid, body, ?, ?, ?, ?, expires_at FROM memories WHERE owner = ? AND id = ?",
        (decision, job_id, ",".join(merged_ids) or None, now, owner, memory_id),
    )


def superseded_by(conn: sqlite3.Connection, owner: str, memory_id: str) -> list[str]:
    """Ids of the owner's memories this one superseded and that still are."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM memories WHERE owner = ? AND superseded_by = ? AND status = 'retired' ORDER BY rowid",
            (owner, memory_id),
        )
    ]
