"""Does a big lane's sidecar (matrix_file) hold the database's vectors? What `check` asks of it.

A restart trusts the file after checks that read little of it: the checksum of its small
parts, 256 spread-out heads against their rows and three rows against vec0 (matrix_file.read,
matrix_sync._agrees_with_vec0). Reading every row would cost a restart what the file saves,
so rows damaged in the middle of the file (same size, header intact) pass, and recall would
rescore them as stored: a wrong memory first, with a score it does not have. Check reads the
whole file instead: every row of a memory unchanged since the file's version must be vec0's
vector in the lane's basis, and its head what that row quantizes to. A file that differs is
deleted under its lock, so the next load rebuilds it from the database (a running server sees
its mapped file unlinked and loads the lane again: matrix_sync._synced).
"""

from __future__ import annotations

import os
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import matrix, matrix_file, matrix_sync
from .matrix import LaneMatrix

# Rows read and compared at a time: 8,192 x 384 floats is 12 MiB of file, as much from vec0.
CHECK_ROWS = 8192


@dataclass(frozen=True, slots=True)
class FileState:
    """What the sidecar of one lane holds against the database, as of check's snapshot."""

    path: Path
    rows: int = 0  # rows the file holds
    compared: int = 0  # of them, rows of memories unchanged since the file's version
    differing: int = 0  # compared rows whose vector or head is not the database's
    missing: int = 0  # vectors of the lane, unchanged since the file's version, it lacks
    unusable: str | None = None  # why a load would not trust it at all (and rebuild it)
    newer: bool = False  # written after check's snapshot: nothing to compare it with
    stamp: tuple[int, int] = (0, 0)  # inode and mtime when it was read: unchanged when discarded

    @property
    def damaged(self) -> bool:
        return self.differing > 0 or self.missing > 0


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_ino, status.st_mtime_ns


def verify(conn: sqlite3.Connection, table: str, dim: int, lane: int) -> FileState | None:
    """Compare the lane's sidecar row by row with vec0 (call inside a read transaction); None
    when the lane has no sidecar. Reads the whole file and the lane's vectors, a block at a
    time, so memory stays at a few blocks whatever the lane's size."""
    database = matrix_sync._database_path(conn)
    path = matrix_file.path_for(database, table, lane)
    if path is None:
        return None
    try:
        stamp = _stamp(path)
    except FileNotFoundError:
        return None
    try:
        held = matrix_file.opened(path, database, dim)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, struct.error) as exc:
        return FileState(path, unusable=str(exc), stamp=stamp)
    row = conn.execute("SELECT vec_version FROM lanes WHERE id = ?", (lane,)).fetchone()
    if held.version > (row[0] if row else 0):
        return FileState(path, held.size, newer=True, stamp=stamp)
    changed = _rowids(conn, "SELECT rowid FROM memories WHERE lane_id = ? AND vec_seq > ?", (lane, held.version))
    # The memories whose vectors the file must hold: from memories, since asking vec0 for its
    # rowids by lane is a scan of it (0.5 s at 70k). A reindex's other model is left out.
    expected = _rowids(
        conn,
        "SELECT rowid FROM memories WHERE lane_id = ? AND vec_seq <= ? AND status = 'live'"
        " AND vector_model = (SELECT model_id FROM embedding_meta WHERE singleton = 1)",
        (lane, held.version),
    )
    file_ids = held.rowids[: held.size]
    unchanged = ~np.isin(file_ids, changed)
    differing = sum(
        _differing_rows(conn, table, held, lo, min(held.size, lo + CHECK_ROWS), unchanged[lo : lo + CHECK_ROWS])
        for lo in range(0, held.size, CHECK_ROWS)
    )
    missing = int(np.count_nonzero(~np.isin(expected, file_ids)))
    return FileState(path, held.size, int(np.count_nonzero(unchanged)), differing, missing, stamp=stamp)


def _rowids(conn: sqlite3.Connection, sql: str, args: tuple[int, int]) -> np.ndarray:
    return np.fromiter((rowid for (rowid,) in conn.execute(sql, args)), dtype=np.int64)


def _differing_rows(
    conn: sqlite3.Connection, table: str, held: LaneMatrix, lo: int, hi: int, wanted: np.ndarray
) -> int:
    """How many of rows lo..hi (those `wanted`) are not vec0's vector in the lane's basis, or
    hold a head that is not what their row quantizes to (a row vec0 lacks counts too)."""
    assert held.basis is not None and held.heads is not None
    picked = np.flatnonzero(wanted)
    if not len(picked):
        return 0
    rows = matrix_file.rows_read(held, lo, hi)[picked]
    ids = held.rowids[lo:hi][picked]
    found = matrix_sync._vectors(conn, table, held.dim, ids.tolist())
    present = np.fromiter((i in found for i in ids.tolist()), dtype=bool, count=len(ids))
    bad = ~present
    if present.any():
        vectors = np.stack([found[int(i)] for i in ids[present].tolist()])
        bad[present] = np.abs(vectors @ held.basis.T - rows[present]).max(axis=1) > matrix_sync.ROW_TOLERANCE
    codes, scales = matrix.quantize_heads(rows[:, : held.heads.shape[1]])
    bad |= (codes != held.heads[lo:hi][picked]).any(axis=1) | (scales != held.head_scales[lo:hi][picked])
    return int(np.count_nonzero(bad))


# Why a load may refuse a sound file: an older format (rewritten on first use). Any other reason
# is an error, another database's file too: a server that mapped this path before it was copied
# over reads the other database's vectors until check deletes it.
_NOT_DAMAGE = ("format ",)


def unusable_by_damage(state: FileState) -> bool:
    return state.unusable is not None and not state.unusable.startswith(_NOT_DAMAGE)


def discard(state: FileState) -> bool:
    """Delete a damaged sidecar so the next load rebuilds it from the database; False (left
    alone) when it changed since it was read -- a forget zeroed rows in it or a server wrote
    it again -- since the comparison then says nothing about the file as it is now."""
    with matrix_file.locked(state.path):
        try:
            if _stamp(state.path) != state.stamp:
                return False
            os.unlink(state.path)
        except FileNotFoundError:
            return False
    return True
