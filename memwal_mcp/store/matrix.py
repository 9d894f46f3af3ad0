"""Each lane's vectors, kept in memory as one float32 matrix, for exact kNN at NumPy speed.

sqlite-vec's brute-force scan reads every vector through SQLite pages on every query
(about 25 ms at 10k, 100+ ms at 100k); a matrix-vector product over the same vectors
takes a few milliseconds, and it is exact, like the scan it replaces. The matrix is
loaded from the vector table on a lane's first search and then kept in step through
`lanes.vec_version`: every change to a memory of the lane bumps it (triggers,
migration 007) and stamps the memory, so a search first applies just the memories
changed since -- including changes made by other processes on the same file.
Reads run in one transaction so the version and the vectors agree.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
import sqlite3

import numpy as np

_GROW = 1.25


@dataclass
class _Lane:
    version: int
    dim: int
    rowids: np.ndarray  # int64, first `size` entries used
    vectors: np.ndarray  # float32 (capacity, dim)
    size: int = 0
    slot: dict[int, int] = field(default_factory=dict)  # rowid -> row of `vectors`
    lock: threading.Lock = field(default_factory=threading.Lock)

    def put(self, rowid: int, vector: np.ndarray) -> None:
        index = self.slot.get(rowid)
        if index is None:
            if self.size == len(self.rowids):
                capacity = max(64, int(len(self.rowids) * _GROW) + 1)
                self.rowids = np.resize(self.rowids, capacity)
                grown = np.empty((capacity, self.dim), dtype=np.float32)
                grown[: self.size] = self.vectors[: self.size]
                self.vectors = grown
            index = self.size
            self.size += 1
            self.slot[rowid] = index
            self.rowids[index] = rowid
        self.vectors[index] = vector

    def drop(self, rowid: int) -> None:
        index = self.slot.pop(rowid, None)
        if index is None:
            return
        last = self.size - 1
        if index != last:  # move the last row into the hole
            moved = int(self.rowids[last])
            self.rowids[index] = moved
            self.vectors[index] = self.vectors[last]
            self.slot[moved] = index
        self.size = last


_lanes: dict[tuple[str, str, int], _Lane] = {}
_registry_lock = threading.Lock()


def _database_file(conn: sqlite3.Connection) -> str:
    """The file, with its inode: a new database at the same path must not inherit a cache."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        return f"{path}#{os.stat(path).st_ino}"
    except OSError:
        return path


def _decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def _synced(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> _Lane:
    """The lane's matrix, brought up to date (call inside a read or write transaction)."""
    key = (_database_file(conn), table, lane)
    row = conn.execute("SELECT vec_version FROM lanes WHERE id = ?", (lane,)).fetchone()
    version = row[0] if row else 0
    with _registry_lock:
        cached = _lanes.get(key)
    if cached is not None and cached.dim == dim:
        with cached.lock:
            if cached.version != version:
                changed = conn.execute(
                    "SELECT rowid, status, vector_model FROM memories WHERE lane_id = ? AND vec_seq > ?",
                    (lane, cached.version),
                ).fetchall()
                wanted = [rowid for rowid, status, model in changed if status == "live" and model]
                found = _vectors(conn, table, wanted)
                for rowid, _, _ in changed:
                    if rowid in found:
                        cached.put(rowid, found[rowid])
                    else:
                        cached.drop(rowid)
                cached.version = version
        return cached
    rows = conn.execute(f"SELECT rowid, embedding FROM {table} WHERE lane_id = ?", (lane,)).fetchall()
    fresh = _Lane(version, dim, np.empty(len(rows), dtype=np.int64), np.empty((len(rows), dim), dtype=np.float32))
    for rowid, blob in rows:
        fresh.put(rowid, _decode(blob))
    with _registry_lock:
        _lanes[key] = fresh
    return fresh


def _vectors(conn: sqlite3.Connection, table: str, rowids: list[int]) -> dict[int, np.ndarray]:
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({marks})", chunk):
            found[rowid] = _decode(blob)
    return found


def _in_read_transaction(conn: sqlite3.Connection, fn):
    """Run fn with a consistent snapshot (no-op when a transaction is already open, as in curation)."""
    if conn.in_transaction:
        return fn()
    conn.execute("BEGIN")
    try:
        return fn()
    finally:
        conn.execute("COMMIT")


def nearest(
    conn: sqlite3.Connection, table: str, dim: int, lane: int, query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """(rowid, cosine) of the k live memories with the most similar vectors, best first. Exact."""
    return nearest_in(synced(conn, table, dim, lane), query, k)


def synced(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> _Lane:
    """The lane's matrix, up to date as of now: search it later with `nearest_in`, off the connection."""
    return _in_read_transaction(conn, lambda: _synced(conn, table, dim, lane))


def nearest_in(matrix: _Lane, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """`nearest` over a matrix from `synced`: no database access, so it can run beside a query."""
    with matrix.lock:
        size = matrix.size
        if size == 0 or k <= 0:
            return []
        scores = matrix.vectors[:size] @ query
        if k < size:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        return [(int(matrix.rowids[i]), float(scores[i])) for i in top]


def nearest_many(
    conn: sqlite3.Connection, table: str, dim: int, lane: int, queries: np.ndarray, k: int
) -> list[list[tuple[int, float]]]:
    """`nearest` for a batch of queries with one matrix product (curation nominates a whole batch)."""

    return _in_read_transaction(conn, lambda: nearest_many_in(_synced(conn, table, dim, lane), queries, k))


def nearest_many_in(matrix: _Lane, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """`nearest_many` over a matrix from `synced`: no database access."""
    with matrix.lock:
        size = matrix.size
        if size == 0 or k <= 0 or len(queries) == 0:
            return [[] for _ in range(len(queries))]
        scores = queries @ matrix.vectors[:size].T
        rowids = matrix.rowids[:size].copy()
    found: list[list[tuple[int, float]]] = []
    for row in scores:
        top = np.argpartition(-row, k - 1)[:k] if k < size else np.arange(size)
        top = top[np.argsort(-row[top], kind="stable")]
        found.append([(int(rowids[i]), float(row[i])) for i in top])
    return found


def cosines(
    conn: sqlite3.Connection, table: str, dim: int, lane: int, query: np.ndarray, rowids: list[int]
) -> dict[int, float]:
    """Cosine of the query with each of these memories' vectors (those that have one)."""

    def run() -> dict[int, float]:
        matrix = _synced(conn, table, dim, lane)
        with matrix.lock:
            found = {rowid: matrix.slot[rowid] for rowid in rowids if rowid in matrix.slot}
            if not found:
                return {}
            scores = matrix.vectors[list(found.values())] @ query
            return {rowid: float(score) for rowid, score in zip(found, scores)}

    return _in_read_transaction(conn, run)


def forget_cache() -> None:
    """Drop every cached matrix (tests; and after a database file is replaced)."""
    with _registry_lock:
        _lanes.clear()
