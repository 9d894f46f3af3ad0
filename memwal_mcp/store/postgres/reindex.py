"""Re-embed every live memory with another model, while searches keep using the old vectors.

As on SQLite: the new vectors go into a new table (memory_vectors_r<n>), progress is recorded
after every batch so an interrupted reindex resumes, and the switch is one transaction.
"""

from __future__ import annotations

import time

import numpy as np
from psycopg import Connection

from ..records import ReindexState
from . import vectors


def _state(conn: Connection) -> ReindexState | None:
    row = conn.execute(
        "SELECT model_id, dim, vector_table, last_rowid, started_at FROM reindex_state WHERE singleton = 1"
    ).fetchone()
    return ReindexState(row[0], int(row[1]), vectors.checked_table(row[2]), int(row[3]), row[4]) if row else None


def _exists(conn: Connection, name: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone() == (True,)


def begin(conn: Connection, model_id: str, dim: int, lock: str) -> ReindexState:
    with conn.transaction():
        conn.execute(lock)
        state = _state(conn)
        if state is not None and (state.model_id, state.dim) == (model_id, dim):
            return state
        if state is not None:
            conn.execute(f"DROP TABLE IF EXISTS {state.vector_table}")
            conn.execute("DELETE FROM reindex_state")
        current = vectors.vector_table(conn)
        number = 1
        while f"memory_vectors_r{number}" == current or _exists(conn, f"memory_vectors_r{number}"):
            number += 1
        name = f"memory_vectors_r{number}"
        vectors.create_vector_table(conn, name, dim)
        state = ReindexState(model_id, dim, name, 0, time.time())
        conn.execute(
            "INSERT INTO reindex_state (singleton, model_id, dim, vector_table, last_rowid, started_at)"
            " VALUES (1, %s, %s, %s, %s, %s)",
            (state.model_id, state.dim, state.vector_table, state.last_rowid, state.started_at),
        )
    return state


def done_upto(conn: Connection, mark: int) -> int:
    row = conn.execute("SELECT count(*) FROM memories WHERE status = 'live' AND pk <= %s", (mark,)).fetchone()
    return int(row[0]) if row else 0


def remaining(conn: Connection, after: int) -> int:
    row = conn.execute("SELECT count(*) FROM memories WHERE status = 'live' AND pk > %s", (after,)).fetchone()
    return int(row[0]) if row else 0


def next_batch(conn: Connection, after: int, limit: int) -> list[tuple[int, int, str]]:
    rows = conn.execute(
        "SELECT pk, lane_id, body FROM memories WHERE status = 'live' AND pk > %s ORDER BY pk LIMIT %s",
        (after, limit),
    ).fetchall()
    return [(int(pk), int(lane), body) for pk, lane, body in rows]


def write_batch(conn: Connection, state: ReindexState, items: list[tuple[int, int, np.ndarray]], lock: str) -> int:
    with conn.transaction():
        conn.execute(lock)
        table = vectors.checked_table(state.vector_table)
        # Only memories still live: a forget meanwhile must not leave a vector behind.
        for pk, lane, vector in items:
            conn.execute(
                f"INSERT INTO {table} (pk, lane_id, embedding) SELECT %s, %s, %s"
                " WHERE EXISTS (SELECT 1 FROM memories WHERE pk = %s AND status = 'live')"
                " ON CONFLICT (pk) DO UPDATE SET lane_id = EXCLUDED.lane_id, embedding = EXCLUDED.embedding",
                (pk, lane, vectors.as_vector(vector), pk),
            )
        mark = max(pk for pk, _, _ in items)
        conn.execute("UPDATE reindex_state SET last_rowid = %s WHERE singleton = 1", (mark,))
    return mark


def finish(conn: Connection, state: ReindexState, lock: str) -> tuple[int, int]:
    """Switch searches to the new vectors. Returns (memories re-embedded, memories left for the worker)."""
    table = vectors.checked_table(state.vector_table)
    with conn.transaction():
        conn.execute(lock)
        old = vectors.vector_table(conn)
        (live,) = conn.execute("SELECT count(*) FROM memories WHERE status = 'live'").fetchone() or (0,)
        done = conn.execute(
            f"UPDATE memories SET vector_model = %s WHERE status = 'live' AND updated_at < %s"
            f" AND pk IN (SELECT pk FROM {table})",
            (state.model_id, state.started_at),
        ).rowcount
        conn.execute(
            f"UPDATE memories SET vector_model = NULL WHERE status = 'live' AND (updated_at >= %s"
            f" OR pk NOT IN (SELECT pk FROM {table}))",
            (state.started_at,),
        )
        conn.execute(
            f"DELETE FROM {table} WHERE pk IN (SELECT pk FROM memories WHERE status != 'live' OR vector_model IS NULL)"
        )
        if vectors.vector_model(conn) is None:
            conn.execute(
                "INSERT INTO embedding_meta (singleton, model_id, dim, created_at, vector_table)"
                " VALUES (1, %s, %s, %s, %s)",
                (state.model_id, state.dim, time.time(), table),
            )
        else:
            conn.execute(
                "UPDATE embedding_meta SET model_id = %s, dim = %s, created_at = %s, vector_table = %s"
                " WHERE singleton = 1",
                (state.model_id, state.dim, time.time(), table),
            )
        conn.execute("DELETE FROM reindex_state")
        if old is not None and old != table:
            conn.execute(f"DROP TABLE IF EXISTS {old}")
    return done, int(live) - done
