"""A big lane's matrix in a file next to the database, mapped instead of loaded.

Loading 1M vectors from sqlite-vec's chunks and rotating them takes 5-7 s and keeps 1.5 GB
of anonymous memory. A lane with heads (matrix.LaneMatrix.keep_heads) is therefore written
once to a sidecar, `<database>.lane-<lane>.<vector table>.vec`, already rotated and with its
heads; a restart maps it: the small parts (rowids, tails, heads: 268 MB at 1M) are
read and checked, the float rows stay file-backed pages (copy-on-write, so this process's
own changes never reach the file) and only the rows a search rescores are ever read.

The file records the lane's `vec_version` it holds; matrix_sync applies the memories
changed since, or rebuilds it, so it is never trusted past what it says. A file that is
missing, truncated, fails its checksum or belongs to another database file (inode) is
rebuilt. Forgetting a memory zeroes its row here too (`erase`): the promise is that its
bytes are gone from every file. Writers and erasers take `<sidecar>.lock`, so an erase
never lands in a file about to be replaced (see matrix_sync._persist).

Layout (little-endian): a 4 KiB header, then basis (dim x dim float32), rowids (count
int64), tails (count float32), heads (count x width float32),
padding to 4 KiB, float rows (count x dim float32). The checksum covers all but the float
rows and the heads (reading them at every start would cost most of what the file saves):
256 heads are compared with their rows, and matrix_sync compares a few rows with vec0.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from . import matrix
from .matrix import LaneMatrix

log = logging.getLogger(__name__)

_MAGIC = b"MWLANE01"
_HEADER = struct.Struct("<8sIIqqqI")  # magic, dim, head width, version, count, database inode, crc32
_PAGE = 4096


def path_for(database: str, table: str, lane: int) -> Path | None:
    """The sidecar of this lane, or None for a database without a file (in memory)."""
    if not database or database == ":memory:":
        return None
    return Path(f"{database}.lane-{lane}.{table}.vec")


def lane_files(path: Path, lane: int) -> list[Path]:
    """Every sidecar of this lane beside `path` (one per vector table that had one)."""
    prefix = path.name[: path.name.index(f".lane-{lane}.") + len(f".lane-{lane}.")]
    return sorted(p for p in path.parent.glob(f"{glob.escape(prefix)}*.vec") if p.name.startswith(prefix))


def _inode(database: str) -> int:
    try:
        return os.stat(database).st_ino
    except OSError:
        return 0


def _offsets(dim: int, width: int, count: int) -> tuple[list[tuple[str, int, int]], int, int]:
    """(name, offset, bytes) of the checked parts, where the float rows start, the file size."""
    parts, at = [], _PAGE
    for name, size in (
        ("basis", dim * dim * 4),
        ("rowids", count * 8),
        ("tails", count * 4),
        ("heads", count * width * 4),
    ):
        parts.append((name, at, size))
        at += size
    floats = -(-at // _PAGE) * _PAGE
    return parts, floats, floats + count * dim * 4


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write(path: Path, database: str, lane: LaneMatrix) -> None:
    """Replace the sidecar by this matrix (rotated and quantized), atomically: a crash
    leaves the old file or the new one, never half of one. Call under `locked(path)`."""
    assert lane.basis is not None and lane.heads is not None
    count, dim, width = lane.size, lane.dim, lane.heads.shape[1]
    small = [
        lane.basis.astype("<f4").tobytes(),
        lane.rowids[:count].astype("<i8").tobytes(),
        lane.tails[:count].astype("<f4").tobytes(),
        lane.heads[:count].astype("<f4").tobytes(),
    ]
    parts, floats_at, _ = _offsets(dim, width, count)
    crc = zlib.crc32(_HEADER.pack(_MAGIC, dim, width, lane.version, count, _inode(database), 0))
    for blob in small[:-1]:  # not the heads: see _heads_agree
        crc = zlib.crc32(blob, crc)
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_HEADER.pack(_MAGIC, dim, width, lane.version, count, _inode(database), crc).ljust(_PAGE, b"\0"))
            for blob in small:
                out.write(blob)
            out.write(b"\0" * (floats_at - parts[-1][1] - parts[-1][2]))
            for rows in _rows_to_write(lane):
                out.write(rows.tobytes())
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _rows_to_write(lane: LaneMatrix) -> Iterator[np.ndarray]:
    """The lane's float rows in order, a block at a time. Rows a mapped lane holds unchanged
    are read from its file (pread: faulting the mapping in would put the whole file in RSS)."""
    file = lane.mapped
    for lo in range(0, lane.size, matrix.BLOCK_ROWS):
        hi = min(lane.size, lo + matrix.BLOCK_ROWS)
        if file is None or lo >= file.count:
            yield np.ascontiguousarray(lane.blocks[lo // matrix.BLOCK_ROWS][: hi - lo], dtype="<f4")
            continue
        rows = np.empty((hi - lo, lane.dim), dtype="<f4")
        held = min(hi, file.count) - lo
        if os.preadv(file.fd, [rows[:held].data], file.offset + lo * lane.dim * 4) != held * lane.dim * 4:
            raise OSError("the lane file ended early")
        changed = lo + np.flatnonzero(file.dirty[lo : lo + held])
        rest = np.arange(lo + held, hi)
        for i in np.concatenate([changed, rest]).tolist():
            rows[i - lo] = lane._row(i)
        yield rows


_HEAD_CHECKS = 256


def _heads_agree(f: BinaryIO, heads: np.ndarray, floats_at: int, dim: int) -> bool:
    """Spread-out heads equal the start of their float rows. The heads are not in the
    checksum (268 MB at 1M: 0.3 s a start); a damaged head only costs its row a place among
    the candidates, since every score returned comes from the float row."""
    count, width = heads.shape
    for i in np.linspace(0, count - 1, min(count, _HEAD_CHECKS)).astype(np.int64).tolist():
        row = np.frombuffer(os.pread(f.fileno(), width * 4, floats_at + i * dim * 4), dtype="<f4")
        if not np.array_equal(row, heads[i]):
            return False
    return True


def read(path: Path, database: str, dim: int) -> LaneMatrix | None:
    """The lane as the sidecar holds it, its float rows mapped; None if there is none or it
    cannot be trusted (then it is rebuilt)."""
    try:
        with open(path, "rb") as f:
            header = f.read(_HEADER.size)
            if len(header) < _HEADER.size:
                raise ValueError("truncated header")
            magic, file_dim, width, version, count, inode, crc = _HEADER.unpack(header)
            if magic != _MAGIC or file_dim != dim or width != min(matrix.HEAD_DIMS, dim) or count <= 0:
                raise ValueError("not a lane file of this dimension")
            if inode != _inode(database):
                raise ValueError("written for another database file")
            parts, floats_at, size = _offsets(dim, width, count)
            if os.fstat(f.fileno()).st_size != size:
                raise ValueError("file size does not match its header")
            check = zlib.crc32(_HEADER.pack(magic, file_dim, width, version, count, inode, 0))
            shapes = {"basis": (dim, dim), "rowids": (count,), "tails": (count,), "heads": (count, width)}
            arrays: dict[str, np.ndarray] = {}
            for name, at, length in parts:  # read in place: no second copy of the 384 MB of heads
                arrays[name] = np.empty(shapes[name], dtype=np.int64 if name == "rowids" else np.float32)
                f.seek(at)
                if f.readinto(arrays[name].data.cast("B")) != length:
                    raise ValueError(f"truncated {name}")
                if name != "heads":
                    check = zlib.crc32(arrays[name].data.cast("B"), check)
            if check != crc:
                raise ValueError("checksum mismatch")
            if not _heads_agree(f, arrays["heads"], floats_at, dim):
                raise ValueError("heads differ from their rows")
            fd = os.dup(f.fileno())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, struct.error) as exc:
        log.warning("lane file %s is unusable (%s); rebuilding it", path, exc)
        return None
    lane = LaneMatrix(version, dim)
    lane.basis, lane.rowids, lane.tails, lane.heads = (
        arrays["basis"],
        arrays["rowids"],
        arrays["tails"],
        arrays["heads"],
    )
    lane.size = count
    _map(path, fd, floats_at, lane)
    lane.slot.set_many(lane.rowids, 0)
    return lane


def _map(path: Path, fd: int, floats_at: int, lane: LaneMatrix) -> None:
    rows = np.memmap(path, dtype="<f4", mode="c", offset=floats_at, shape=(lane.size, lane.dim))
    lane.blocks = [rows[lo : lo + matrix.BLOCK_ROWS] for lo in range(0, lane.size, matrix.BLOCK_ROWS)]
    lane.mapped = matrix.FileRows(fd, floats_at, lane.size, rows)


def adopt(path: Path, lane: LaneMatrix) -> None:
    """Map the float rows of the lane just written to `path` in place of its own: the
    anonymous blocks are freed, and nothing else is read again. Call under `locked(path)`."""
    assert lane.heads is not None
    _, floats_at, size = _offsets(lane.dim, lane.heads.shape[1], lane.size)
    fd = os.open(path, os.O_RDONLY)
    if os.fstat(fd).st_size != size:
        os.close(fd)
        raise OSError(f"{path} changed while it was mapped")
    _map(path, fd, floats_at, lane)


def erase(path: Path | None, rowids: list[int]) -> None:
    """Zero the float row and head of each of these rowids in the sidecar (when it holds
    them), and update its checksum: the vector of a forgotten memory must be readable from
    no file. Call under `locked(path)`."""
    if path is None or not rowids or not path.exists():
        return
    with open(path, "r+b") as f:
        header = f.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        magic, dim, width, version, count, inode, _ = _HEADER.unpack(header)
        if magic != _MAGIC or count <= 0:
            return
        parts, floats_at, size = _offsets(dim, width, count)
        if os.fstat(f.fileno()).st_size != size:
            return
        _, rowids_at, _ = parts[1]
        _, heads_at, _ = parts[3]
        f.seek(rowids_at)
        held = np.frombuffer(f.read(count * 8), dtype="<i8")
        positions = np.flatnonzero(np.isin(held, np.asarray(rowids, dtype=np.int64)))
        if not len(positions):
            return
        fd = f.fileno()
        for position in positions.tolist():
            os.pwrite(fd, b"\0" * (dim * 4), floats_at + position * dim * 4)
            os.pwrite(fd, b"\0" * (width * 4), heads_at + position * width * 4)
        check = zlib.crc32(_HEADER.pack(magic, dim, width, version, count, inode, 0))
        for _, at, length in parts[:-1]:
            f.seek(at)
            check = zlib.crc32(f.read(length), check)
        os.pwrite(fd, _HEADER.pack(magic, dim, width, version, count, inode, check), 0)
        os.fsync(fd)
