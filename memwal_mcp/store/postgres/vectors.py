"""Memory vectors in a pgvector table: which table and model, storing and reading vectors.

As on SQLite, `embedding_meta` names the model, its dimension and the table searches use
(reindex builds a new one and switches). A vector row exists only for a live memory: retire,
forget and a body change remove it, so a search needs no join to filter.

kNN searches over these tables are knn.py's; big lanes' HNSW indexes are lane_indexes.py's.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import numpy as np
from psycopg import Connection

from ...errors import EmbeddingError

VECTOR_TABLE = "memory_vectors"
# vector_model of a memory the model could not embed: left out of the backlog.
UNEMBEDDABLE = "-"
_TABLE_NAME = re.compile(r"^memory_vectors(_r\d+)?$")


def checked_table(name: str) -> str:
    """A vector table name from the database, before it goes into SQL text."""
    if not _TABLE_NAME.match(name):
        raise EmbeddingError(f"embedding_meta names an unexpected vector table {name!r}; run `memwal-mcp check`")
    return name


def vector_model(conn: Connection) -> tuple[str, int] | None:
    row = conn.execute("SELECT model_id, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], int(row[1])) if row else None


def vector_space(conn: Connection) -> tuple[str, int] | None:
    """(vector table in use, dimension), or None before the first vector."""
    row = conn.execute("SELECT vector_table, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (checked_table(row[0]), int(row[1])) if row else None


def vector_table(conn: Connection) -> str | None:
    space = vector_space(conn)
    return space[0] if space else None


def create_vector_table(conn: Connection, name: str, dim: int) -> None:
    name = checked_table(name)
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {name} ("
        " pk bigint PRIMARY KEY REFERENCES memories (pk), lane_id bigint NOT NULL,"
        f" embedding vector({int(dim)}) NOT NULL)"
    )
    conn.execute(f"CREATE INDEX IF NOT EXISTS {name}_lane ON {name} (lane_id)")


def ensure_vector_table(conn: Connection, model_id: str, dim: int, lock: str) -> str | None:
    """Bind the database to a model's dimension on first use; refuse a different one. Returns
    the stored model id when it differs at the same dimension (the caller warns)."""
    stored = vector_model(conn)
    if stored is None:
        with conn.transaction():
            conn.execute(lock)
            if vector_model(conn) is None:
                conn.execute(
                    "INSERT INTO embedding_meta (singleton, model_id, dim, created_at) VALUES (1, %s, %s, %s)",
                    (model_id, dim, time.time()),
                )
                create_vector_table(conn, VECTOR_TABLE, dim)
        stored = vector_model(conn)
    assert stored is not None
    stored_model, stored_dim = stored
    if stored_dim != dim:
        raise EmbeddingError(
            f"this database's vectors were built with {stored_model!r} ({stored_dim} dimensions); "
            f"the configured model {model_id!r} has {dim}. Run `memwal-mcp reindex` to re-embed the memories "
            "with it, or configure the original model (MEMWAL_EMBEDDING__MODEL)."
        )
    return stored_model if stored_model != model_id else None


def as_vector(vector: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(vector, dtype=np.float32)


def put(conn: Connection, pk: int, lane: int, vector: np.ndarray) -> None:
    """The memory's vector row, replacing any it had (inside the caller's transaction)."""
    table = vector_table(conn)
    if table is None:
        raise EmbeddingError("no vector table yet: the model's dimension is not recorded")
    conn.execute(
        f"INSERT INTO {table} (pk, lane_id, embedding) VALUES (%s, %s, %s)"
        " ON CONFLICT (pk) DO UPDATE SET lane_id = EXCLUDED.lane_id, embedding = EXCLUDED.embedding",
        (pk, lane, as_vector(vector)),
    )


def drop(conn: Connection, pks: Sequence[int]) -> None:
    """Remove these memories' vector rows, in every vector table (a reindex's too)."""
    if not pks:
        return
    for table in tables(conn):
        conn.execute(f"DELETE FROM {table} WHERE pk = ANY(%s)", (list(pks),))


def tables(conn: Connection) -> list[str]:
    """Every vector table: the one in use and an unfinished reindex's."""
    rows = conn.execute(
        "SELECT vector_table FROM embedding_meta UNION SELECT vector_table FROM reindex_state"
    ).fetchall()
    return [checked_table(name) for (name,) in rows]


def unembedded(conn: Connection, limit: int) -> list[tuple[int, int, str]]:
    rows = conn.execute(
        "SELECT pk, lane_id, body FROM memories WHERE status = 'live' AND vector_model IS NULL ORDER BY pk LIMIT %s",
        (limit,),
    ).fetchall()
    return [(int(pk), int(lane), body) for pk, lane, body in rows]


def mark_unembeddable(conn: Connection, pks: Sequence[int]) -> None:
    if pks:
        conn.execute(
            "UPDATE memories SET vector_model = %s WHERE pk = ANY(%s) AND vector_model IS NULL",
            (UNEMBEDDABLE, list(pks)),
        )


def set_vectors(conn: Connection, items: Sequence[tuple[int, int, str, np.ndarray]], model_id: str) -> int:
    """Store vectors computed off the writer for (pk, lane, body): only where the memory is still
    live, still unembedded and still has that body. Returns how many were stored.

    One UPDATE claims them all and one pipelined batch writes the vector rows: a round trip per
    memory was most of a migration's vector copy."""
    if not items:
        return 0
    with conn.transaction():
        table = vector_table(conn)
        if table is None:
            raise EmbeddingError("no vector table yet: the model's dimension is not recorded")
        claimed = {
            int(pk)
            for (pk,) in conn.execute(
                "UPDATE memories m SET vector_model = %s FROM unnest(%s::bigint[], %s::text[]) AS v (pk, body)"
                " WHERE m.pk = v.pk AND m.status = 'live' AND m.vector_model IS NULL AND m.body = v.body"
                " RETURNING m.pk",
                (model_id, [pk for pk, _, _, _ in items], [body for _, _, body, _ in items]),
            ).fetchall()
        }
        rows = [(pk, lane, as_vector(vector)) for pk, lane, _, vector in items if pk in claimed]
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} (pk, lane_id, embedding) VALUES (%s, %s, %s)"
                " ON CONFLICT (pk) DO UPDATE SET lane_id = EXCLUDED.lane_id, embedding = EXCLUDED.embedding",
                rows,
            )
    return len(rows)


def cosines(conn: Connection, lane: int, query: np.ndarray, pks: Sequence[int]) -> dict[int, float]:
    table = vector_table(conn)
    if table is None or not pks:
        return {}
    rows = conn.execute(
        f"SELECT pk, 1 - (embedding <=> %s) FROM {table} WHERE lane_id = %s AND pk = ANY(%s)",
        (as_vector(query), lane, list(pks)),
    ).fetchall()
    return {int(pk): float(cosine) for pk, cosine in rows}


def vectors_of(conn: Connection, lane: int, pks: Sequence[int]) -> dict[int, np.ndarray]:
    table = vector_table(conn)
    if table is None or not pks:
        return {}
    rows = conn.execute(
        f"SELECT pk, embedding FROM {table} WHERE lane_id = %s AND pk = ANY(%s)", (lane, list(pks))
    ).fetchall()
    return {int(pk): np.asarray(getattr(v, "to_numpy", lambda: v)(), dtype=np.float32) for pk, v in rows}
