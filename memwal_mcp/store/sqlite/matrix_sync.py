"""Keeping each lane's matrix (matrix.py) in step with the database, and the cache that holds them.

A lane's matrix is loaded from the vector table on its first search and then kept in step
through `lanes.vec_version`: every change to a memory of the lane bumps it (triggers,
migration 007) and stamps the memory, so a search first applies just the memories changed
since -- including changes made by other processes on the same file. Reads run in one
transaction so the version and the vectors agree.

Loading reads sqlite-vec's private shadow tables (`<table>_chunks`, `<table>_rowids`,
`<table>_vector_chunks00`) when their layout is sqlite-vec 0.1.x's, checked before it is
trusted, and falls back to reading vec0 row by row. That is why the matrix belongs to the
SQLite backend and not to the store contract.

The cache is process-wide: one matrix per (database file with its inode, vector table, lane).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

import numpy as np

from ... import heap
from . import matrix_file
from .matrix import LaneMatrix

log = logging.getLogger(__name__)

_LOAD_ROWS = 4096
# A lane this big keeps its rows in its own PCA basis, so curation can bound each cosine
# from the first PREFIX_DIMS coordinates and skip most of the full products (see rotate).
ROTATE_ROWS = 1 << 16
# A lane this big also keeps its rows' heads (matrix.LaneMatrix.keep_heads) and a sidecar
# file (matrix_file) its float rows are mapped from: a recall scans the heads and rescores
# the best RESCORE_ROWS rows exactly.
HEADS_ROWS = ROTATE_ROWS
# A sidecar this many versions behind is written again once the changes are applied.
REWRITE_CHANGES = 4096
# How far a sidecar's row may be from vec0's vector (float32 rounding of the basis product is about
# 1e-6): the load's spot check (_agrees_with_vec0) and check's full comparison (matrix_check).
ROW_TOLERANCE = 1e-4
BUSY_TIMEOUT_S = 10.0


_lanes: dict[tuple[str, str, int], LaneMatrix] = {}
_registry_lock = threading.Lock()


def _database_file(conn: sqlite3.Connection) -> str:
    """The file, with its inode: a new database at the same path must not inherit a cache."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        return f"{path}#{os.stat(path).st_ino}"
    except OSError:
        return path


def _database_path(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA database_list").fetchone()[2])


def _decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def _synced(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> LaneMatrix:
    """The lane's matrix, brought up to date (call inside a read or write transaction)."""
    key = (_database_file(conn), table, lane)
    row = conn.execute("SELECT vec_version FROM lanes WHERE id = ?", (lane,)).fetchone()
    version = row[0] if row else 0
    with _registry_lock:
        cached = _lanes.get(key)
    if cached is not None and _file_unlinked(cached):
        cached = None  # check deleted it as damaged, or another process wrote it again: map it anew
    if cached is not None and cached.dim == dim:
        if cached.version == version:  # up to date: no lock, so a scan in progress never holds this up
            return cached
        with cached.lock.writing():
            if cached.version == version or _apply_changes(conn, table, dim, lane, cached, version) is not None:
                return cached
    fresh = _from_file(conn, table, dim, lane, version)
    if fresh is None:
        fresh = _load(conn, table, dim, lane, version)
        if fresh.heads is not None:
            fresh = _persist(conn, table, dim, lane, fresh)
    with _registry_lock:
        _lanes[key] = fresh
    return fresh


def _file_unlinked(cached: LaneMatrix) -> bool:
    """Whether the sidecar this lane's rows are read from is no longer at its path (an fstat:
    a microsecond a search). Its rows stay readable through the open file, so without this a
    server would keep rescoring from a file `memwal-mcp check` found damaged and deleted."""
    file = cached.mapped
    return file is not None and os.fstat(file.fd).st_nlink == 0


def _apply_changes(
    conn: sqlite3.Connection, table: str, dim: int, lane: int, cached: LaneMatrix, version: int
) -> list[int] | None:
    """Bring the matrix from its version to `version` by the memories changed since; the
    rowids it dropped, or None (nothing changed) after a bulk change: read the lane again."""
    changed = conn.execute(
        "SELECT rowid, status, vector_model FROM memories WHERE lane_id = ? AND vec_seq > ?",
        (lane, cached.version),
    ).fetchall()
    if len(changed) > max(_LOAD_ROWS, cached.size // 4):
        return None
    wanted = [rowid for rowid, status, model in changed if status == "live" and model]
    found = _vectors(conn, table, dim, wanted)
    dropped = []
    for rowid, _, _ in changed:
        if rowid in found:
            cached.put(rowid, found[rowid])
        else:
            cached.drop(rowid)
            dropped.append(rowid)
    cached.version = version
    if cached.basis is None and cached.size >= ROTATE_ROWS:  # grew past it row by row
        cached.rotate()
    if cached.heads is None and cached.size >= HEADS_ROWS:
        cached.keep_heads()
        _persist(conn, table, dim, lane, cached)
    return dropped


def _from_file(conn: sqlite3.Connection, table: str, dim: int, lane: int, version: int) -> LaneMatrix | None:
    """The lane from its sidecar (matrix_file), brought up to `version`; None when there is
    no usable one. A forget that could not reach the file (a crash in between) is caught up
    here: every row the file holds of a memory changed since is zeroed in it."""
    database = _database_path(conn)
    path = matrix_file.path_for(database, table, lane)
    if path is None:
        return None
    fresh = matrix_file.read(path, database, dim)
    if fresh is None:
        return None
    if fresh.version > version or not _agrees_with_vec0(conn, table, fresh):
        log.warning("lane file %s does not match the database; rebuilding it", path)
        return None
    if fresh.version == version:
        return fresh
    changed_from = fresh.version
    dropped = _apply_changes(conn, table, dim, lane, fresh, version)
    if dropped is None:
        return None
    if version - changed_from > REWRITE_CHANGES:
        return _persist(conn, table, dim, lane, fresh)
    with matrix_file.locked(path):
        matrix_file.erase(path, dropped)
    return fresh


def _agrees_with_vec0(conn: sqlite3.Connection, table: str, fresh: LaneMatrix) -> bool:
    """A few rows of the file, turned back out of the basis, equal vec0's vectors."""
    assert fresh.basis is not None
    for index in {0, fresh.size // 2, fresh.size - 1}:
        rowid = int(fresh.rowids[index])
        row = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        if row is None or not np.allclose(_decode(row[0]), fresh._row(index) @ fresh.basis, atol=ROW_TOLERANCE):
            return False
    return True


def _persist(conn: sqlite3.Connection, table: str, dim: int, lane: int, fresh: LaneMatrix) -> LaneMatrix:
    """Write the lane's sidecar and map the lane from it (its float rows leave anonymous
    memory). Under the sidecar's lock, so a forget committed while the file was written,
    which this read transaction cannot see, is looked up on a connection of its own and
    erased from the new file before any other erase can run."""
    database = _database_path(conn)
    path = matrix_file.path_for(database, table, lane)
    if path is None:
        return fresh
    try:
        with matrix_file.locked(path):
            matrix_file.write(path, database, fresh)
            matrix_file.erase(path, _gone_since(database, lane, fresh.version))
            matrix_file.adopt(path, fresh)
    except OSError as exc:
        log.warning("could not write lane file %s (%s); the lane stays in memory", path, exc)
    heap.trim()
    return fresh


def _gone_since(database: str, lane: int, version: int) -> list[int]:
    """Rowids of the lane's memories changed after `version` that no longer hold a vector,
    as committed now (a fresh connection: the caller's snapshot may be older)."""
    fresh = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        return [
            rowid
            for (rowid,) in fresh.execute(
                "SELECT rowid FROM memories WHERE lane_id = ? AND vec_seq > ? AND (status != 'live' OR vector_model IS NULL)",
                (lane, version),
            )
        ]
    finally:
        fresh.close()


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
    if fresh.size >= HEADS_ROWS:
        fresh.keep_heads()
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


def erase_from_file(conn: sqlite3.Connection, table: str, lane: int, rowids: list[int]) -> None:
    """Zero these (forgotten) memories' rows in the lane's sidecar files: the current vector
    table's, and any a reindex left behind for an earlier table."""
    current = matrix_file.path_for(_database_path(conn), table, lane)
    if current is None:
        return
    for path in matrix_file.lane_files(current, lane):
        with matrix_file.locked(path):
            matrix_file.erase(path, rowids)
