"""Each lane's vectors, kept in memory as float32 blocks, for exact kNN at NumPy speed.

This matrix is the SQLite backend's own, not part of the store contract. sqlite-vec's
brute-force scan reads every vector through SQLite pages on every query (about 25 ms at
10k, 100+ ms at 100k); a matrix-vector product over the same vectors takes a few
milliseconds, and it is exact, like the scan it replaces. Keeping it current is tied to
SQLite: matrix_sync.py loads a lane from sqlite-vec's private shadow tables (their chunk
layout, not a public API) and applies only the memories changed since, through the
`lanes.vec_version` triggers. Another backend searches with its own index (PostgreSQL with
pgvector: HNSW), so the layers above see only the contract's `VectorSearch`, and nothing
outside store/sqlite/ may reach for this module.

Two things are process-wide, shared by every connection and every store opened in the
process: matrix_sync.py's cache of lane matrices, keyed by database file and inode (a new
file at the same path starts empty), and this module's thread pool, which splits the scan
of a big lane over the cores.

This module holds the matrix itself (rows in blocks, the PCA rotation) and the searches
over a synced matrix, which need no database access.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ...rwlock import ReadWriteLock
from ..contract import VectorMatch
from .matrix_slots import _Slots

_GROW = 1.25
BLOCK_ROWS = 1 << 16  # 96 MiB at 384 dimensions
# A lane at least this big is scanned on every core, in row ranges (NumPy releases the GIL;
# its own BLAS threads are off, see memwal_mcp/__init__.py).
SPLIT_ROWS = 32_768
# A rotated lane (see LaneMatrix.rotate; matrix_sync.ROTATE_ROWS) lets curation bound each
# cosine from the first PREFIX_DIMS coordinates and skip most of the full products.
PREFIX_DIMS = 64
_PRUNE_ROWS = 16_384  # rows per piece of a pruned scan (64 queries: 4 MiB of bounds)
_BASIS_SAMPLE = 8192  # rows the basis is fitted on (12 MiB at 384 dimensions)
_BOUND_SLACK = 1e-3  # float32 rounding in the rotated coordinates and the bound itself
SCAN_THREADS = min(4, os.cpu_count() or 1)
# A lane with heads (see LaneMatrix.keep_heads; matrix_sync.HEADS_ROWS) answers a recall from
# the RESCORE_ROWS rows whose first HEAD_DIMS coordinates score best, each then scored exactly.
HEAD_DIMS = 64
RESCORE_ROWS = 1024
HEAD_LEVELS = 127  # heads are int8 codes times a per-row scale (see quantize_heads)
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


def quantize_heads(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's heads as int8 codes (-127..127) and the row's scale (its largest |coordinate|
    / 127): a quarter of the bytes, so a restart reads 64 MB at 1M instead of 256 MB. Per row,
    not per column: a row needs nothing but its own numbers, so a row added later, the file
    and a check of one row against its float row all quantize alike."""
    heads = np.asarray(heads, dtype=np.float32)
    scales = (np.abs(heads).max(axis=1) / np.float32(HEAD_LEVELS)).astype(np.float32)
    divide = np.where(scales > 0, scales, np.float32(1))
    codes = np.clip(np.rint(heads / divide[:, None]), -HEAD_LEVELS, HEAD_LEVELS).astype(np.int8)
    return codes, scales


def quantized_heads(exact: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """codes, scales and each head's distance from `exact` once quantized."""
    codes, scales = quantize_heads(exact)
    return codes, scales, np.linalg.norm(exact - codes * scales[:, None], axis=1).astype(np.float32)


def will_need(fd: int, offsets: list[int], length: int) -> None:
    """Ask the kernel for all these ranges at once before they are read one by one: rows not in
    the page cache then arrive together instead of a disk round trip each (1,024 uncached rows
    at 1M: 80-130 -> 20 ms here; 1 ms more when they are all cached). Not on every OS."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for offset in offsets:
        advise(fd, offset, length, os.POSIX_FADV_WILLNEED)


class FileRows:
    """The first `count` rows of a lane mapped from its sidecar file (matrix_file), and the
    file open for reading them. A search reads the rows it rescores with pread, not through
    the mapping: on this kernel a fault maps the page cache's whole large folio around the
    row (1,024 rescored rows put 1.1 GB of file pages in RSS), a read puts nothing there.
    `dirty` marks the rows this process changed (copy-on-write), which only the mapping holds."""

    __slots__ = ("count", "dirty", "fd", "mapping", "offset")

    def __init__(self, fd: int, offset: int, count: int, mapping: np.ndarray) -> None:
        self.fd, self.offset, self.count, self.mapping = fd, offset, count, mapping
        self.dirty = np.zeros(count, dtype=bool)

    def mark(self, start: int, stop: int) -> None:
        self.dirty[min(start, self.count) : min(stop, self.count)] = True

    def __del__(self) -> None:
        os.close(self.fd)


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
    # (capacity, HEAD_DIMS) float32 holding each row's int8 head codes (quantize_heads), contiguous: NumPy
    # has no fast int8 product, and a cast is all a restart does to them (the scale is applied to the products)
    heads: np.ndarray | None = None
    head_scales: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float32))  # row's code -> value
    head_errors: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float32))  # |row[:HEAD_DIMS] - head|
    mapped: FileRows | None = None  # the sidecar file (matrix_file) the first blocks are mapped from

    @property
    def capacity(self) -> int:
        return sum(len(block) for block in self.blocks)

    def reserve(self, rows: int) -> None:
        """Room for `rows` rows in all: full blocks, then a last block just big enough."""
        if len(self.rowids) < rows:
            self.rowids = np.resize(self.rowids, max(rows, int(len(self.rowids) * _GROW) + 1))
            self.tails = np.resize(self.tails, len(self.rowids))
            if self.heads is not None:
                grown_heads = np.empty((len(self.rowids), self.heads.shape[1]), dtype=np.float32)
                grown_heads[: self.size] = self.heads[: self.size]
                self.heads = grown_heads
                self.head_scales = np.resize(self.head_scales, len(self.rowids))
                self.head_errors = np.resize(self.head_errors, len(self.rowids))
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
        if self.mapped is not None:
            self.mapped.mark(start, start + len(vectors))
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
        if self.heads is not None:
            self._set_heads(start, vectors)
        self.slot.set_many(np.asarray(rowids, dtype=np.int64), start)
        self.size += len(rowids)

    def put(self, rowid: int, vector: np.ndarray) -> None:
        index = self.slot.get(rowid)
        if index is None:
            self.append(np.array([rowid], dtype=np.int64), vector.reshape(1, -1))
        else:
            row = self._in_basis(vector)
            self._row(index)[:] = row
            if self.mapped is not None:
                self.mapped.mark(index, index + 1)
            if self.basis is not None:
                self.tails[index] = np.linalg.norm(row[PREFIX_DIMS:])
            if self.heads is not None:
                self._set_heads(index, row.reshape(1, -1))

    def _set_heads(self, start: int, rows: np.ndarray) -> None:
        """The heads of these rows (in the basis) from `start`, and how far each is from its row."""
        assert self.heads is not None
        codes, scales, errors = quantized_heads(rows[:, : self.heads.shape[1]])
        self.heads[start : start + len(rows)] = codes
        self.head_scales[start : start + len(rows)] = scales
        self.head_errors[start : start + len(rows)] = errors

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

    def keep_heads(self) -> None:
        """Keep each row's first HEAD_DIMS coordinates (in the lane's basis) in one contiguous
        array beside the rows: a sixth of their bytes, and in a rotated lane most of each
        vector's length, so a scan of the heads ranks the rows almost as the full scan does
        (overlap@10 in benchmarks/README.md) and the full rows -- mapped from the lane's file
        -- are read only for the few it picks. The heads are kept as their int8 codes (what the
        lane's file holds) with each row's scale, and each row's distance from its exact head,
        which bounds the error a curation bound can make (see _pruned_scan)."""
        assert self.basis is not None
        width = min(HEAD_DIMS, self.dim)
        self.heads = np.empty((len(self.rowids), width), dtype=np.float32)
        self.head_scales = np.empty(len(self.rowids), dtype=np.float32)
        self.head_errors = np.empty(len(self.rowids), dtype=np.float32)
        for rows, start in self._ranges(BLOCK_ROWS):
            for lo in range(0, len(rows), 8192):  # the temporaries stay small
                self._set_heads(start + lo, rows[lo : lo + 8192])

    def drop(self, rowid: int) -> None:
        index = self.slot.pop(rowid)
        if index is None:
            return
        last = self.size - 1
        if index != last:  # move the last row into the hole
            moved = int(self.rowids[last])
            self.rowids[index] = moved
            self._row(index)[:] = self._row(last)
            if self.mapped is not None:
                self.mapped.mark(index, index + 1)
            self.tails[index] = self.tails[last]
            if self.heads is not None:
                self.heads[index] = self.heads[last]
                self.head_scales[index] = self.head_scales[last]
                self.head_errors[index] = self.head_errors[last]
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

    def best_heads(self, query: np.ndarray, count: int) -> np.ndarray:
        """Indices of the `count` rows whose heads score best against the (rotated) query.
        Each core takes a range and keeps its own best `count` (a partial sort of 1M floats
        on one thread costs half as much as the scan), then those few are merged."""
        heads = self.heads
        assert heads is not None
        head = np.ascontiguousarray(query[: heads.shape[1]])

        def best(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
            partial = heads[lo:hi] @ head
            partial *= self.head_scales[lo:hi]
            if hi - lo > count:
                top = np.argpartition(-partial, count - 1)[:count]
                return top + lo, partial[top]
            return np.arange(lo, hi), partial

        pool = _scan_pool() if self.size >= SPLIT_ROWS else None
        if pool is None:
            found = [best(0, self.size)]
        else:
            step = math.ceil(self.size / SCAN_THREADS)
            found = list(pool.map(lambda lo: best(lo, min(self.size, lo + step)), range(0, self.size, step)))
        indices = np.concatenate([i for i, _ in found])
        scores = np.concatenate([s for _, s in found])
        if len(indices) > count:
            indices = indices[np.argpartition(-scores, count - 1)[:count]]
        return np.sort(indices)  # in file order: the rows are read front to back

    def gather(self, indices: np.ndarray) -> np.ndarray:
        """These rows as stored. In a lane with heads, those the sidecar file holds unchanged are
        read from it (see FileRows), the others block by block; a lane without heads is scanned
        whole through the mapping at every search, so its rows are read from the blocks (two
        system calls a row cost a recall's word matches 0.2 ms at 2,000 memories)."""
        indices = np.asarray(indices, dtype=np.int64)
        out = np.empty((len(indices), self.dim), dtype=np.float32)
        from_file = np.zeros(len(indices), dtype=bool)
        if self.mapped is not None and self.heads is not None:
            file = self.mapped
            from_file = indices < file.count
            from_file[from_file] = ~file.dirty[indices[from_file]]
            width = self.dim * 4
            wanted = indices[from_file].tolist()
            will_need(file.fd, [file.offset + i * width for i in wanted], width)
            for j, i in zip(np.flatnonzero(from_file).tolist(), wanted):
                if os.preadv(file.fd, [out[j]], file.offset + i * width) != width:
                    raise OSError(f"lane file ended before row {i}")
        rest = np.flatnonzero(~from_file)
        block, offset = np.divmod(indices[rest], BLOCK_ROWS)
        for b in np.unique(block):
            picked = block == b
            out[rest[picked]] = self.blocks[int(b)][offset[picked]]
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
        found: dict[int, int] = {}
        for rowid in rowids:
            if (index := self.slot.get(rowid)) is not None:
                found[rowid] = index
        return found

    def _stored(self, indices: list[int]) -> np.ndarray:
        """These rows as stored (in the lane's basis, if it has one)."""
        return self.gather(np.asarray(indices, dtype=np.int64))


def nearest_in(matrix: LaneMatrix, query: np.ndarray, k: int) -> list[VectorMatch]:
    """`nearest` over a matrix from `synced`: no database access, so it can run beside a query."""
    with matrix.lock.reading():
        size = matrix.size
        if size == 0 or k <= 0:
            return []
        if matrix.heads is not None and k < RESCORE_ROWS < size:
            return _nearest_by_heads(matrix, query, k)
        scores = matrix.scores(query)
        if k < size:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        return _matches(matrix.rowids[top], scores[top])


def _matches(rowids: np.ndarray, cosines: np.ndarray) -> list[VectorMatch]:
    """Python ints and floats (the same values: float32 widens exactly), converted in bulk."""
    return [VectorMatch(pk, cosine) for pk, cosine in zip(rowids.tolist(), cosines.tolist())]


def _nearest_by_heads(matrix: LaneMatrix, query: np.ndarray, k: int) -> list[VectorMatch]:
    """The top k of the RESCORE_ROWS rows whose heads score best, by their exact cosines:
    every score returned is exact; a true neighbour is missed only when its head does not
    rank it among those (overlap@10 with the exact scan: benchmarks/README.md)."""
    rotated = np.ascontiguousarray(matrix._in_basis(query))
    candidates = matrix.best_heads(rotated, RESCORE_ROWS)
    scores = matrix.gather(candidates) @ rotated
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    return _matches(matrix.rowids[candidates[top]], scores[top])


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
    of 64 on the 1M speed lane: 310 -> 177 ms (the product itself is 80 ms of it).

    The heads, when kept, stand in for the rows' first coordinates without touching the rows'
    pages. They are quantized, so q[:m].v[:m] <= q[:m].h + |q[:m]| |v[:m] - h| (h the head,
    both cut to m): the bound adds each row's head error and stays a bound."""
    query_tails = np.linalg.norm(rotated[:, PREFIX_DIMS:], axis=1)
    prefix = np.ascontiguousarray(rotated[:, :PREFIX_DIMS])
    prefix_norms = np.linalg.norm(prefix, axis=1)
    bar = np.full(len(rotated), min_score, dtype=np.float32)
    for rows, start in matrix._ranges(_PRUNE_ROWS):
        if matrix.heads is None:
            bound = prefix @ rows[:, :PREFIX_DIMS].T
        else:
            bound = prefix @ matrix.heads[start : start + len(rows), :PREFIX_DIMS].T
            bound *= matrix.head_scales[start : start + len(rows)][None, :]
        bound += query_tails[:, None] * matrix.tails[start : start + len(rows)][None, :]
        if matrix.heads is not None:
            bound += prefix_norms[:, None] * matrix.head_errors[start : start + len(rows)][None, :]
        # Row-major flat indices come out sorted by query: one run of candidates per query.
        flat = np.flatnonzero(bound >= (bar - _BOUND_SLACK)[:, None])
        if not len(flat):
            continue
        queries, near = np.divmod(flat, len(rows))
        for run in np.split(np.arange(len(flat)), np.flatnonzero(np.diff(queries)) + 1):
            q = int(queries[run[0]])
            candidates = near[run]
            exact = matrix.gather(candidates + start) @ rotated[q]
            hit = exact >= bar[q]
            scores = keep(q, candidates[hit] + start, exact[hit])
            if len(scores) >= k:
                bar[q] = max(min_score, float(scores.min()))
