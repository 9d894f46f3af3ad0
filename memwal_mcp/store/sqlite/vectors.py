"""Memory vectors: which vec0 table and model the database uses, storing vectors, searching them.

A memory's vector lives in a sqlite-vec table beside its row; which table, and which model
made its vectors, is recorded in `embedding_meta` (reindex builds a new table and switches to
it). Vectors are written with the memory inside the curation transaction, or later by the
backlog (`unembedded`, `set_vectors`) for memories made while the model was unavailable.
Searches go through the lane's in-memory matrix (matrix.py), not vec0's own scan.

Apart from the memory rows (memories.py) and body changes (revisions.py) because vectors have
a life of their own: a memory may have none yet, a reindex (reindex.py) replaces them all in a
new table, and searches read them through the matrix rather than row by row.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

import numpy as np

from ...errors import EmbeddingError
from ..contract import VectorMatch, VectorSearch
from . import matrix, matrix_sync
from .database import transaction

# The first vector table's name; `vector_table(conn)` gives the one in use.
VECTOR_TABLE = "memory_vectors"


# --- embedding model bookkeeping -------------------------------------------


def vector_model(conn: sqlite3.Connection) -> tuple[str, int] | None:
    row = conn.execute("SELECT model_id, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], row[1]) if row else None


def vector_table(conn: sqlite3.Connection) -> str | None:
    """The vec0 table searches use (it changes when `memwal-mcp reindex` completes); None before any vector."""
    row = conn.execute("SELECT vector_table FROM embedding_meta WHERE singleton = 1").fetchone()
    return row[0] if row else None


def create_vector_table(conn: sqlite3.Connection, name: str, dim: int) -> None:
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING vec0("
        f" lane_id integer partition key, embedding float[{int(dim)}] distance_metric=cosine)"
    )


def ensure_vector_table(conn: sqlite3.Connection, model_id: str, dim: int) -> str | None:
    """Bind the database to a model's dimension on first use; refuse a different one.

    Returns the stored model id when it differs from `model_id` at the same dimension
    (vectors still comparable in shape, but not in meaning: the caller warns).
    """
    stored = vector_model(conn)
    if stored is None:
        with transaction(conn):
            if vector_model(conn) is None:
                conn.execute(
                    "INSERT INTO embedding_meta (singleton, model_id, dim, created_at) VALUES (1, ?, ?, ?)",
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


def _blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def unembedded(conn: sqlite3.Connection, limit: int) -> list[tuple[int, int, str]]:
    """(rowid, lane_id, body) of live memories without a vector (made while the model was unavailable)."""
    return conn.execute(
        "SELECT rowid, lane_id, body FROM memories WHERE status = 'live' AND vector_model IS NULL LIMIT ?", (limit,)
    ).fetchall()


# vector_model of a memory the model could not embed: left out of the backlog
# (full-text search still finds it; reindex tries again).
UNEMBEDDABLE = "-"


def mark_unembeddable(conn: sqlite3.Connection, rowids: Sequence[int]) -> None:
    conn.executemany(
        "UPDATE memories SET vector_model = ? WHERE rowid = ? AND vector_model IS NULL",
        [(UNEMBEDDABLE, rowid) for rowid in rowids],
    )


def set_vectors(conn: sqlite3.Connection, items: Sequence[tuple[int, int, str, np.ndarray]], model_id: str) -> int:
    """Store vectors computed off the writer for (rowid, lane, body): only where the memory is still
    live, still unembedded and still has that body -- a forget, merge or undo may have landed
    meanwhile. Returns how many were stored."""
    stored = 0
    with transaction(conn):
        table = vector_table(conn)
        if table is None:
            raise EmbeddingError("no vector table yet: the model's dimension is not recorded")
        for rowid, lane, body, vector in items:
            claimed = conn.execute(
                "UPDATE memories SET vector_model = ? WHERE rowid = ? AND status = 'live'"
                " AND vector_model IS NULL AND body = ?",
                (model_id, rowid, body),
            ).rowcount
            if claimed:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
                conn.execute(
                    f"INSERT INTO {table} (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, _blob(vector))
                )
                stored += 1
    return stored


# --- read side -------------------------------------------------------------


def _vector_space(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """(vector table in use, dimension), or None before the first vector."""
    row = conn.execute("SELECT vector_table, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], row[1]) if row else None


class _LaneSearch:
    """A lane's matrix as it was when synced: searching it needs no connection, so recall and
    curation run it while the connection's thread does something else."""

    __slots__ = ("_matrix",)

    def __init__(self, lane_matrix: matrix.LaneMatrix) -> None:
        self._matrix = lane_matrix

    def __call__(
        self, queries: np.ndarray, k: int, min_score: float | None = None, exact: bool = False
    ) -> list[list[VectorMatch]]:
        if min_score is None and len(queries) == 1 and not exact:  # by the heads, in a lane that has them
            return [matrix.nearest_in(self._matrix, queries[0], k)]
        return matrix.nearest_many_in(self._matrix, queries, k, min_score)  # every row, or every bound


def _no_vectors(
    queries: np.ndarray, k: int, min_score: float | None = None, exact: bool = False
) -> list[list[VectorMatch]]:
    return [[] for _ in range(len(queries))]


def vector_search(conn: sqlite3.Connection, lane: int) -> VectorSearch:
    """kNN over the lane's live vectors as of now (see contract.VectorSearch)."""
    space = _vector_space(conn)
    return _no_vectors if space is None else _LaneSearch(matrix_sync.synced(conn, *space, lane))


def lane_vectors_of(conn: sqlite3.Connection, lane: int, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The vectors of these memories of the lane (those that have one), from the lane's matrix."""
    space = _vector_space(conn)
    return (
        {} if space is None or not rowids else matrix.vectors_in(matrix_sync.synced(conn, *space, lane), list(rowids))
    )


def erase_from_file(conn: sqlite3.Connection, table: str, lane: int, rowids: Sequence[int]) -> None:
    """After a forget commits: its vectors leave the lane's sidecar file too (matrix_file)."""
    matrix_sync.erase_from_file(conn, table, lane, list(rowids))


def cosines(conn: sqlite3.Connection, lane: int, query: np.ndarray, rowids: Sequence[int]) -> dict[int, float]:
    """Cosine of the query with these memories of the lane (those that have a vector)."""
    space = _vector_space(conn)
    return {} if space is None or not rowids else matrix_sync.cosines(conn, *space, lane, query, list(rowids))
