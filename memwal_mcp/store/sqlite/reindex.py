"""Re-embed every live memory with another model, while searches keep using the old vectors.

The new vectors go into a new vec0 table; progress is recorded after every batch,
so an interrupted reindex resumes where it stopped. The switch is one transaction:
embedding_meta names the new table and model, the old table is dropped, and
memories whose body changed (or that appeared) after they were re-embedded lose
their vector mark, so the curation worker's backlog pass embeds them again.
"""

from __future__ import annotations

import sqlite3
import time

import numpy as np

from ..records import ReindexState
from . import vectors
from .database import transaction


def _state(conn: sqlite3.Connection) -> ReindexState | None:
    row = conn.execute(
        "SELECT model_id, dim, vector_table, last_rowid, started_at FROM reindex_state WHERE singleton = 1"
    ).fetchone()
    return ReindexState(*row) if row else None


def begin(conn: sqlite3.Connection, model_id: str, dim: int) -> ReindexState:
    """Resume the reindex to this model, or start one (abandoning a reindex to another model)."""
    with transaction(conn):
        state = _state(conn)
        if state is not None and (state.model_id, state.dim) == (model_id, dim):
            return state
        if state is not None:
            conn.execute(f"DROP TABLE IF EXISTS {state.vector_table}")
            conn.execute("DELETE FROM reindex_state")
        current = vectors.vector_table(conn)
        number = 1
        while True:
            name = f"memory_vectors_r{number}"
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
            if name != current and not exists:
                break
            number += 1
        vectors.create_vector_table(conn, name, dim)
        state = ReindexState(model_id, dim, name, 0, time.time())
        conn.execute(
            "INSERT INTO reindex_state (singleton, model_id, dim, vector_table, last_rowid, started_at)"
            " VALUES (1, ?, ?, ?, ?, ?)",
            (state.model_id, state.dim, state.vector_table, state.last_rowid, state.started_at),
        )
    return state


def done_upto(conn: sqlite3.Connection, mark: int) -> int:
    return conn.execute("SELECT COUNT(*) FROM memories WHERE status = 'live' AND rowid <= ?", (mark,)).fetchone()[0]


def remaining(conn: sqlite3.Connection, after_rowid: int) -> int:
    return conn.execute("SELECT COUNT(*) FROM memories WHERE status = 'live' AND rowid > ?", (after_rowid,)).fetchone()[
        0
    ]


def next_batch(conn: sqlite3.Connection, after_rowid: int, limit: int) -> list[tuple[int, int, str]]:
    """(rowid, lane_id, body) of live memories after `after_rowid`, in rowid order."""
    return conn.execute(
        "SELECT rowid, lane_id, body FROM memories WHERE status = 'live' AND rowid > ? ORDER BY rowid LIMIT ?",
        (after_rowid, limit),
    ).fetchall()


def write_batch(conn: sqlite3.Connection, state: ReindexState, items: list[tuple[int, int, np.ndarray]]) -> int:
    """Store a batch of new vectors and the progress mark together; returns the new mark."""
    with transaction(conn):
        conn.executemany(f"DELETE FROM {state.vector_table} WHERE rowid = ?", [(rowid,) for rowid, _, _ in items])
        conn.executemany(
            f"INSERT INTO {state.vector_table} (rowid, lane_id, embedding) VALUES (?, ?, ?)",
            [(rowid, lane, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for rowid, lane, v in items],
        )
        mark = max(rowid for rowid, _, _ in items)
        conn.execute("UPDATE reindex_state SET last_rowid = ? WHERE singleton = 1", (mark,))
    return mark


def finish(conn: sqlite3.Connection, state: ReindexState) -> tuple[int, int]:
    """Switch searches to the new vectors. Returns (memories re-embedded, memories left for the worker)."""
    with transaction(conn):
        old = vectors.vector_table(conn)
        live = conn.execute("SELECT COUNT(*) FROM memories WHERE status = 'live'").fetchone()[0]
        # Re-embedded and unchanged since: the new vector is right.
        done = conn.execute(
            f"UPDATE memories SET vector_model = ? WHERE status = 'live' AND updated_at < ?"
            f" AND rowid IN (SELECT rowid FROM {state.vector_table})",
            (state.model_id, state.started_at),
        ).rowcount
        # Changed or new during the reindex: the worker embeds them with the configured model.
        conn.execute(
            f"UPDATE memories SET vector_model = NULL WHERE status = 'live' AND (updated_at >= ?"
            f" OR rowid NOT IN (SELECT rowid FROM {state.vector_table}))",
            (state.started_at,),
        )
        conn.execute(
            f"DELETE FROM {state.vector_table} WHERE rowid IN"
            f" (SELECT rowid FROM memories WHERE status != 'live' OR vector_model IS NULL)"
        )
        if vectors.vector_model(conn) is None:
            conn.execute(
                "INSERT INTO embedding_meta (singleton, model_id, dim, created_at, vector_table) VALUES (1, ?, ?, ?, ?)",
                (state.model_id, state.dim, time.time(), state.vector_table),
            )
        else:
            conn.execute(
                "UPDATE embedding_meta SET model_id = ?, dim = ?, created_at = ?, vector_table = ? WHERE singleton = 1",
                (state.model_id, state.dim, time.time(), state.vector_table),
            )
        if old is not None and old != state.vector_table:
            conn.execute(f"DROP TABLE IF EXISTS {old}")
        conn.execute("DELETE FROM reindex_state")
    return done, live - done
