"""Each lane's vectors, kept in memory as float32 blocks, for exact kNN at NumPy speed.

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

import logging
import math
import os
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ... import heap
from ...rwlock import ReadWriteLock
from ..contract import VectorMatch

log = logging.getLogger(__name__)

_GROW = 1.25
BLOCK_ROWS = 1 << 16  # 96 MiB at 384 dimensions
_LOAD_ROWS = 4096
# A lane at least this big is scanned on every core, in row ranges (NumPy releases the GIL;
# its own BLAS threads are off, see memwal_mcp/__init__.py).
SPLIT_ROWS = 32_768
# A lane this big keeps its rows in its own PCA basis, so curation can bound each cosine
# from the first PREFIX_DIMS coordinates and skip most of the full products (see rotate).
ROTATE_ROWS = 1 << 16
PREFIX_DIMS = 64
_PRUNE_ROWS = 16_384  # rows per piece of a pruned scan (64 queries: 4 MiB of bounds)
_BASIS_SAMPLE = 8192  # rows the basis is fitted on (12 MiB at 384 dimensions)
_BOUND_SLACK = 1e-3  # float32 rounding in the rotated coordinates and the bound itself
SCAN_THREADS = min(4, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _scan_pool() -> ThreadPoolExecutor | None:
    global _pool
    if SCAN_THREADS < 2:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(SCAN_THREADS, thread_name_prefix="memwal-scan")
        return _pool


class _Slots:
    """rowid -> row index of a lane. A dict costs about 110 bytes an entry (110 MiB at 1M
    rows). A big lane whose rowids are dense enough -- memories get increasing rowids, so
    one bulk-filled or long-lived lane mostly is -- keeps an int32 array over their span
    instead, 4 bytes per rowid in the span (-1: not in the lane)."""

    DENSE_MIN = 4096  # rows before an array is considered
    DENSE_SPAN = 8  # at most this many rowids of span per row in the lane

    def __init__(self) -> None:
        self._dict: dict[int, int] | None = {}
        self._pos = np.empty(0, dtype=np.int32)
        self._base = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, rowid: int) -> bool:
        return self.get(rowid) is not None

    def __getitem__(self, rowid: int) -> int:
        index = self.get(rowid)
        if index is None:
            raise KeyError(rowid)
        return index

    def get(self, rowid: int) -> int | None:
        if self._dict is not None:
            return self._dict.get(rowid)
        i = rowid - self._base
        if 0 <= i < len(self._pos) and self._pos[i] >= 0:
            return int(self._pos[i])
        return None

    def set(self, rowid: int, index: int) -> None:
        self.set_many(np.array([rowid], dtype=np.int64), index)

    def set_many(self, rowids: np.ndarray, first: int) -> None:
        """rowids[j] -> first + j."""
        if not len(rowids):
            return
        indices = np.arange(first, first + len(rowids), dtype=np.int64)
        if self._dict is not None:
            before = len(self._dict)
            self._dict.update(zip(rowids.tolist(), indices.tolist()))
            self._count += len(self._dict) - before
            if self._count >= self.DENSE_MIN:
                self._to_array()
            return
        low, high = int(rowids.min()), int(rowids.max())
        if low < self._base or high >= self._base + len(self._pos):
            if not self._cover(low, high):
                self._to_dict()
                self.set_many(rowids, first)
                return
        offsets = rowids - self._base
        self._count += int(np.count_nonzero(self._pos[offsets] < 0))
        self._pos[offsets] = indices

    def pop(self, rowid: int) -> int | None:
        if self._dict is not None:
            index = self._dict.pop(rowid, None)
        else:
            index = self.get(rowid)
            if index is not None:
                self._pos[rowid - self._base] = -1
        if index is not None:
            self._count -= 1
        return index

    def _cover(self, low: int, high: int) -> bool:
        """Widen the array to hold rowids low..high; False if that would be too sparse."""
        base = min(low, self._base) if len(self._pos) else low
        end = max(high + 1, self._base + len(self._pos))
        span = end - base
        if span > self.DENSE_SPAN * max(self._count, self.DENSE_MIN):
            return False
        end = base + span + span // 8  # headroom for the rowids still to come
        grown = np.full(end - base, -1, dtype=np.int32)
        if len(self._pos):
            grown[self._base - base : self._base - base + len(self._pos)] = self._pos
        self._pos, self._base = grown, base
        return True

    def _to_array(self) -> None:
        assert self._dict is not None
        rowids = np.fromiter(self._dict.keys(), dtype=np.int64, count=len(self._dict))
        low, high = int(rowids.min()), int(rowids.max())
        if high - low + 1 > self.DENSE_SPAN * len(rowids):
            return
        indices = np.fromiter(self._dict.values(), dtype=np.int64, count=len(self._dict))
        self._pos, self._base = np.empty(0, dtype=np.int32), low
        self._cover(low, high)
        self._pos[rowids - self._base] = indices
        self._dict = None

    def _to_dict(self) -> None:
        offsets = np.flatnonzero(self._pos >= 0)
        self._dict = dict(zip((offsets + self._base).tolist(), self._pos[offsets].tolist()))
        self._pos = np.empty(0, dtype=np.int32)


@dataclass
class LaneMatrix:
    """Rows live in blocks of BLOCK_ROWS, so a lane never needs one huge allocation: growing
    appends a block instead of copying the whole matrix, which at 1M vectors would briefly
    hold 2.8 GiB for a 1.4 GiB matrix. Only the last block is ever reallocated, and it is
    small until it is full."""

    version: int
    dim: int
    rowids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # first `size` used
    blocks: list[np.ndarray] = field(default_factory=list)  # float32 (rows, dim); all but the last full
    size: int = 0
    slot: _Slots = field(default_factory=_Slots)  # rowid -> row index
    lock: ReadWriteLock = field(default_factory=ReadWriteLock)  # scans read; syncing writes
    basis: np.ndarray | None = None  # (dim, dim) float32, rows = principal directions; rows stored as basis @ v
    tails: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float32))  # |row[PREFIX_DIMS:]|

    @property
    def capacity(self) -> int:
        return sum(len(block) for block in self.blocks)

    def reserve(self, rows: int) -> None:
        """Room for `rows` rows in all: full blocks, then a last block just big enough."""
        if len(self.rowids) < rows:
            self.rowids = np.resize(self.rowids, max(rows, int(len(self.rowids) * _GROW) + 1))
            self.tails = np.resize(self.tails, len(self.rowids))
        while self.capacity < rows:
            if self.blocks and len(self.blocks[-1]) < BLOCK_ROWS:
                last = self.blocks[-1]
                want = rows - (self.capacity - len(last))
                grown = np.empty(
                    (min(BLOCK_ROWS, max(want, 64, int(len(last) * _GROW) + 1)), self.dim), dtype=np.float32
                )
                used = min(len(last), max(0, self.size - (self.capacity - len(last))))
                grown[:used] = last[:used]
                self.blocks[-1] = grown
            else:
                self.blocks.append(
                    np.empty((min(BLOCK_ROWS, max(64, rows - self.capacity)), self.dim), dtype=np.float32)
                )

    def _row(self, index: int) -> np.ndarray:
        return self.blocks[index // BLOCK_ROWS][index % BLOCK_ROWS]

    def _set_rows(self, start: int, vectors: np.ndarray) -> None:
        done = 0
        while done < len(vectors):
            index = start + done
            block, offset = divmod(index, BLOCK_ROWS)
            n = min(len(vectors) - done, BLOCK_ROWS - offset)
            self.blocks[block][offset : offset + n] = vectors[done : done + n]
            done += n

    def _in_basis(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        return vectors if self.basis is None else vectors @ self.basis.T

    def append(self, rowids: np.ndarray, vectors: np.ndarray) -> None:
        """Rows for rowids not in the lane yet (the initial load)."""
        start = self.size
        self.reserve(start + len(rowids))
        self.rowids[start : start + len(rowids)] = rowids
        vectors = self._in_basis(vectors)
        self._set_rows(start, vectors)
        if self.basis is not None:
            self.tails[start : start + len(rowids)] = np.linalg.norm(vectors[:, PREFIX_DIMS:], axis=1)
        self.slot.set_many(np.asarray(rowids, dtype=np.int64), start)
        self.size += len(rowids)

    def put(self, rowid: int, vector: np.ndarray) -> None:
        index = self.slot.get(rowid)
        if index is None:
            self.append(np.array([rowid], dtype=np.int64), vector.reshape(1, -1))
        else:
            row = self._in_basis(vector)
            self._row(index)[:] = row
            if self.basis is not None:
                self.tails[index] = np.linalg.norm(row[PREFIX_DIMS:])

    def rotate(self) -> None:
        """Store the rows in the lane's PCA basis (fitted on about 8k of them). Dot products
        do not change -- queries are rotated too -- but most of a vector's length now sits in
        its first coordinates, so q.v <= q[:m].v[:m] + |q[m:]| |v[m:]| is a tight bound: on
        100k facts, 0.17 % of vectors can reach a cosine of 0.86 by the first 64 of 384
        coordinates, and only those get a full product (a batch's nominations: 75 -> 28 ms).
        The rotation costs 0.2 s at 100k, once per load."""
        used = self._used_blocks()
        step = max(1, self.size // _BASIS_SAMPLE)
        sample = np.concatenate([block[::step] for block in used])
        _, vectors = np.linalg.eigh((sample.T @ sample).astype(np.float64))
        del sample
        basis = np.ascontiguousarray(vectors[:, ::-1].T, dtype=np.float32)

        def turn(piece: tuple[np.ndarray, int]) -> None:
            rows, start = piece
            rows[:] = rows @ basis.T
            self.tails[start : start + len(rows)] = np.linalg.norm(rows[:, PREFIX_DIMS:], axis=1)

        pool = _scan_pool()
        pieces = self._ranges(4096)
        if pool is None:
            for piece in pieces:
                turn(piece)
        else:
            list(pool.map(turn, pieces))
        self.basis = basis

    def drop(self, rowid: int) -> None:
        index = self.slot.pop(rowid)
        if index is None:
            return
        last = self.size - 1
        if index != last:  # move the last row into the hole
            moved = int(self.rowids[last])
            self.rowids[index] = moved
            self._row(index)[:] = self._row(last)
            self.tails[index] = self.tails[last]
            self.slot.set(moved, index)
        self.size = last

    def _used_blocks(self) -> list[np.ndarray]:
        out, left = [], self.size
        for block in self.blocks:
            if left <= 0:
                break
            out.append(block[: min(left, len(block))])
            left -= len(block)
        return out

    def _ranges(self, longest: int) -> list[tuple[np.ndarray, int]]:
        """(rows, first row index) pieces of at most `longest` rows, never across a block."""
        out: list[tuple[np.ndarray, int]] = []
        start = 0
        for block in self._used_blocks():
            for lo in range(0, len(block), longest):
                out.append((block[lo : lo + longest], start + lo))
            start += len(block)
        return out

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every row (vectors are unit length), in row order."""
        query = np.ascontiguousarray(self._in_basis(query))
        out = np.empty(self.size, dtype=np.float32)

        def dot(piece: tuple[np.ndarray, int]) -> None:
            rows, start = piece
            np.dot(rows, query, out=out[start : start + len(rows)])

        pool = _scan_pool() if self.size >= SPLIT_ROWS else None
        if pool is None:
            for piece in self._ranges(BLOCK_ROWS):
                dot(piece)
        else:
            list(pool.map(dot, self._ranges(math.ceil(self.size / SCAN_THREADS))))
        return out

    def rows(self, indices: list[int]) -> np.ndarray:
        """These rows' vectors, as they were given (not in the lane's basis)."""
        stored = self._stored(indices)
        return stored if self.basis is None else stored @ self.basis

    def dots(self, indices: list[int], query: np.ndarray) -> np.ndarray:
        """Cosine of the query with these rows."""
        return self._stored(indices) @ self._in_basis(query)

    def indices(self, rowids: list[int]) -> dict[int, int]:
        """rowid -> row index of those of these rowids that are in the lane."""
        return {rowid: self.slot[rowid] for rowid in rowids if rowid in self.slot}

    def _stored(self, indices: list[int]) -> np.ndarray:
        """These rows as stored (in the lane's basis, if it has one)."""
        if not indices:
            return np.empty((0, self.dim), np.float32)
        return np.stack([self._row(i) for i in indices])


_lanes: dict[tuple[str, str, int], LaneMatrix] = {}
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


def _synced(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> LaneMatrix:
    """The lane's matrix, brought up to date (call inside a read or write transaction)."""
    key = (_database_file(conn), table, lane)
    row = conn.execute("SELECT vec_version FROM lanes WHERE id = ?", (lane,)).fetchone()
    version = row[0] if row else 0
    with _registry_lock:
        cached = _lanes.get(key)
    if cached is not None and cached.dim == dim:
        if cached.version == version:  # up to date: no lock, so a scan in progress never holds this up
            return cached
        with cached.lock.writing():
            if cached.version == version:
                return cached
            changed = conn.execute(
                "SELECT rowid, status, vector_model FROM memories WHERE lane_id = ? AND vec_seq > ?",
                (lane, cached.version),
            ).fetchall()
            if len(changed) <= max(_LOAD_ROWS, cached.size // 4):  # else a bulk change: read the lane again
                wanted = [rowid for rowid, status, model in changed if status == "live" and model]
                found = _vectors(conn, table, dim, wanted)
                for rowid, _, _ in changed:
                    if rowid in found:
                        cached.put(rowid, found[rowid])
                    else:
                        cached.drop(rowid)
                cached.version = version
                if cached.basis is None and cached.size >= ROTATE_ROWS:  # grew past it row by row
                    cached.rotate()
                return cached
    fresh = _load(conn, table, dim, lane, version)
    with _registry_lock:
        _lanes[key] = fresh
    return fresh


def _load(conn: sqlite3.Connection, table: str, dim: int, lane: int, version: int) -> LaneMatrix:
    """A lane's vectors, ready to search (rotated when big), read from sqlite-vec's chunk
    tables when their layout is the one this code knows (1,024 vectors per blob: 1M vectors
    in about 5 s instead of 14 s row by row through vec0), else row by row."""
    planned = conn.execute("SELECT live_count FROM lanes WHERE id = ?", (lane,)).fetchone()

    def empty() -> LaneMatrix:
        fresh = LaneMatrix(version, dim)
        fresh.reserve(planned[0] if planned else 0)
        return fresh

    fresh = empty()
    try:
        by_chunks = _load_chunks(conn, table, dim, lane, fresh)
    except (sqlite3.Error, ValueError) as exc:
        log.warning("reading %s by chunks failed (%s); reading it row by row", table, exc)
        by_chunks = False
    if not by_chunks:
        fresh = empty()
        cursor = conn.execute(f"SELECT rowid, embedding FROM {table} WHERE lane_id = ?", (lane,))
        while rows := cursor.fetchmany(_LOAD_ROWS):  # streamed: never the whole lane as Python objects
            rowids = np.fromiter((rowid for rowid, _ in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), dim)
            fresh.append(rowids, vectors)
    if fresh.size >= ROTATE_ROWS:
        fresh.rotate()
    heap.trim()  # the blobs read on the way
    return fresh


_CHUNK_COLUMNS = {"chunk_id", "size", "partition00", "validity", "rowids"}
_ROWID_COLUMNS = {"rowid", "chunk_id", "chunk_offset"}


def _chunk_layout_known(conn: sqlite3.Connection, table: str) -> bool:
    """Whether the vec0 table's shadow tables look like sqlite-vec 0.1.x's, which this module reads."""

    def columns(shadow: str) -> set[str]:
        return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}_{shadow}")')}

    return (
        _CHUNK_COLUMNS <= columns("chunks")
        and columns("vector_chunks00") == {"rowid", "vectors"}
        and _ROWID_COLUMNS <= columns("rowids")
    )


def _valid_bits(validity: bytes, size: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size].astype(bool)


def _load_chunks(conn: sqlite3.Connection, table: str, dim: int, lane: int, fresh: LaneMatrix) -> bool:
    """Fill `fresh` from the chunk tables of sqlite-vec 0.1.x; False (and nothing read) if the
    layout differs. A few rows are checked against vec0's own answer before trusting it."""
    if not _chunk_layout_known(conn, table):
        return False
    # Two steps, not a join: SQLite would scan the vector blobs of every lane, or sort them
    # in a temporary b-tree (the whole lane in memory, 1.5 GB at 1M, for an ORDER BY).
    chunks = conn.execute(
        f'SELECT chunk_id, size, validity, rowids FROM "{table}_chunks" WHERE partition00 = ?', (lane,)
    ).fetchall()
    for chunk_id, size, validity, rowids in chunks:
        vectors = _chunk_vectors(conn, table, chunk_id)
        if len(rowids) != 8 * size or len(vectors) != 4 * dim * size or len(validity) * 8 < size:
            raise ValueError(f"a chunk of {size} vectors has blobs of unexpected sizes")
        valid = _valid_bits(validity, size)
        if valid.any():
            fresh.append(
                np.frombuffer(rowids, dtype=np.int64)[valid],
                np.frombuffer(vectors, dtype=np.float32).reshape(size, dim)[valid],
            )
    for index in {0, fresh.size // 2, fresh.size - 1} if fresh.size else ():
        rowid = int(fresh.rowids[index])
        row = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        if row is None or not np.array_equal(_decode(row[0]), fresh._row(index)):
            raise ValueError(f"vector {rowid} read by chunks differs from vec0's")
    return True


def _chunk_vectors(conn: sqlite3.Connection, table: str, chunk_id: int) -> bytes:
    row = conn.execute(f'SELECT vectors FROM "{table}_vector_chunks00" WHERE rowid = ?', (chunk_id,)).fetchone()
    if row is None:
        raise ValueError(f"chunk {chunk_id} has no vectors")
    return row[0]


def _vectors(conn: sqlite3.Connection, table: str, dim: int, rowids: list[int]) -> dict[int, np.ndarray]:
    """Vectors of these rows (those that have one). By chunk when the layout is known: each
    chunk blob is read once for all its changed rows -- a batch of new memories sits in one
    or two -- where vec0 looks every row up on its own (0.5 ms a row at 100k)."""
    if rowids and _chunk_layout_known(conn, table):
        try:
            return _vectors_by_chunk(conn, table, dim, rowids)
        except (sqlite3.Error, ValueError) as exc:
            log.warning("reading changed vectors of %s by chunks failed (%s); reading them one by one", table, exc)
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({marks})", chunk):
            found[rowid] = _decode(blob)
    return found


def _vectors_by_chunk(conn: sqlite3.Connection, table: str, dim: int, rowids: list[int]) -> dict[int, np.ndarray]:
    where: dict[int, list[tuple[int, int]]] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        for rowid, chunk_id, offset in conn.execute(
            f'SELECT rowid, chunk_id, chunk_offset FROM "{table}_rowids" WHERE rowid IN ({marks})', part
        ):
            if chunk_id is not None:
                where.setdefault(chunk_id, []).append((rowid, offset))
    found: dict[int, np.ndarray] = {}
    for chunk_id, items in where.items():
        row = conn.execute(
            f'SELECT size, validity, rowids FROM "{table}_chunks" WHERE chunk_id = ?', (chunk_id,)
        ).fetchone()
        if row is None:
            continue
        size, validity, chunk_rowids = row
        vectors = _chunk_vectors(conn, table, chunk_id)
        if len(chunk_rowids) != 8 * size or len(vectors) != 4 * dim * size:
            raise ValueError(f"chunk {chunk_id} has blobs of unexpected sizes")
        valid = _valid_bits(validity, size)
        ids = np.frombuffer(chunk_rowids, dtype=np.int64)
        block = np.frombuffer(vectors, dtype=np.float32).reshape(size, dim)
        for rowid, offset in items:
            if not 0 <= offset < size or ids[offset] != rowid:
                raise ValueError(f"row {rowid} is not where {table}_rowids says")
            if valid[offset]:
                found[rowid] = block[offset].copy()
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


def synced(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> LaneMatrix:
    """The lane's matrix, up to date as of now: search it later with `nearest_in`, off the connection."""
    return _in_read_transaction(conn, lambda: _synced(conn, table, dim, lane))


def nearest_in(matrix: LaneMatrix, query: np.ndarray, k: int) -> list[VectorMatch]:
    """`nearest` over a matrix from `synced`: no database access, so it can run beside a query."""
    with matrix.lock.reading():
        size = matrix.size
        if size == 0 or k <= 0:
            return []
        scores = matrix.scores(query)
        if k < size:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        return [VectorMatch(int(matrix.rowids[i]), float(scores[i])) for i in top]


def vectors_in(matrix: LaneMatrix, rowids: list[int]) -> dict[int, np.ndarray]:
    """These rows' vectors (those in the lane), as they were given."""
    with matrix.lock.reading():
        found = matrix.indices(rowids)
        return dict(zip(found, matrix.rows(list(found.values()))))


def nearest_many_in(
    matrix: LaneMatrix, queries: np.ndarray, k: int, min_score: float | None = None
) -> list[list[VectorMatch]]:
    """`nearest_many` over a matrix from `synced`: no database access. With `min_score`, only
    hits at or above it (curation nominates from a threshold up: a comparison per vector
    instead of a partial sort; in a rotated lane, a full product only for the vectors whose
    bound reaches it). One block at a time, so the scores never take more than
    queries x BLOCK_ROWS floats (64 x 1M would be 256 MB)."""
    queries = np.asarray(queries, dtype=np.float32)
    if k <= 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    best: list[tuple[np.ndarray, np.ndarray]] = [
        (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)) for _ in range(len(queries))
    ]

    def keep(q: int, picked: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Add these hits to query q's best k; its best scores so far."""
        if len(picked):
            index, score = best[q]
            index, score = np.concatenate([index, picked]), np.concatenate([score, scores])
            if len(index) > k:
                top = np.argpartition(-score, k - 1)[:k]
                index, score = index[top], score[top]
            best[q] = (index, score)
        return best[q][1]

    with matrix.lock.reading():
        rotated = matrix._in_basis(queries)
        if min_score is not None and matrix.basis is not None:
            _pruned_scan(matrix, rotated, k, min_score, keep)
        else:
            start = 0
            for block in matrix._used_blocks():
                for q, row in enumerate(rotated @ block.T):
                    if min_score is not None:
                        picked = np.flatnonzero(row >= min_score)
                        if len(picked) > k:
                            picked = picked[np.argpartition(-row[picked], k - 1)[:k]]
                    else:
                        picked = np.argpartition(-row, k - 1)[:k] if k < len(row) else np.arange(len(row))
                    keep(q, picked + start, row[picked])
                start += len(block)
        found = []
        for index, score in best:
            order = np.argsort(-score, kind="stable")
            found.append([VectorMatch(int(matrix.rowids[i]), float(score[j])) for j, i in zip(order, index[order])])
    return found


def _pruned_scan(
    matrix: LaneMatrix,
    rotated: np.ndarray,
    k: int,
    min_score: float,
    keep: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
) -> None:
    """The threshold search of a rotated lane: bound every cosine from the first PREFIX_DIMS
    coordinates, and take a full product only where the bound reaches the query's bar. The
    bar starts at min_score and rises to the query's k-th best hit so far -- a row below it
    cannot enter the top k. Rows go in pieces of _PRUNE_ROWS, so the bounds (queries x
    piece) stay in the CPU cache between the product, the sum and the comparison. A batch
    of 64 on the 1M speed lane: 310 -> 177 ms (the product itself is 80 ms of it)."""
    query_tails = np.linalg.norm(rotated[:, PREFIX_DIMS:], axis=1)
    prefix = np.ascontiguousarray(rotated[:, :PREFIX_DIMS])
    bar = np.full(len(rotated), min_score, dtype=np.float32)
    for rows, start in matrix._ranges(_PRUNE_ROWS):
        bound = prefix @ rows[:, :PREFIX_DIMS].T
        bound += query_tails[:, None] * matrix.tails[start : start + len(rows)][None, :]
        # Row-major flat indices come out sorted by query: one run of candidates per query.
        flat = np.flatnonzero(bound >= (bar - _BOUND_SLACK)[:, None])
        if not len(flat):
            continue
        queries, near = np.divmod(flat, len(rows))
        for run in np.split(np.arange(len(flat)), np.flatnonzero(np.diff(queries)) + 1):
            q = int(queries[run[0]])
            candidates = near[run]
            exact = rows[candidates] @ rotated[q]
            hit = exact >= bar[q]
            scores = keep(q, candidates[hit] + start, exact[hit])
            if len(scores) >= k:
                bar[q] = max(min_score, float(scores.min()))


def cosines(
    conn: sqlite3.Connection, table: str, dim: int, lane: int, query: np.ndarray, rowids: list[int]
) -> dict[int, float]:
    """Cosine of the query with each of these memories' vectors (those that have one)."""

    def run() -> dict[int, float]:
        matrix = _synced(conn, table, dim, lane)
        with matrix.lock.reading():
            found = matrix.indices(rowids)
            if not found:
                return {}
            scores = matrix.dots(list(found.values()), query)
            return {rowid: float(score) for rowid, score in zip(found, scores)}

    return _in_read_transaction(conn, run)


def forget_cache() -> None:
    """Drop every cached matrix (tests; and after a database file is replaced)."""
    with _registry_lock:
        _lanes.clear()
