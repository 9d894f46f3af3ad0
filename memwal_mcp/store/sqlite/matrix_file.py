"""A big lane's matrix in a file next to the database, mapped instead of loaded.

Loading 1M vectors from sqlite-vec's chunks and rotating them takes 5-7 s and keeps 1.5 GB
of anonymous memory. A lane with heads (matrix.LaneMatrix.keep_heads) is therefore written
once to a sidecar, `<database>.lane-<lane>.<vector table>.vec`, already rotated and with its
heads; a restart maps it: the small parts (rowids, tails, int8 heads with their scales:
84 MB at 1M) are read and checked, the float rows stay file-backed pages (copy-on-write, so
this process's own changes never reach the file) and only the rows a search rescores are
ever read.

The file records the lane's `vec_version` it holds; matrix_sync applies the memories
changed since, or rebuilds it, so it is never trusted past what it says. A file that is
missing, truncated, of another format (an older `_MAGIC`), fails its checksum or belongs to
another database file (inode) is rebuilt. Forgetting a memory zeroes its row here too
(`erase`), and a file erase cannot read is deleted: the promise is that its bytes are gone
from every file. Writers and erasers take `<sidecar>.lock`, so an erase never lands in a
file about to be replaced (see matrix_sync._persist).

Layout (little-endian): a 4 KiB header, then basis (dim x dim float32), rowids (count
int64), tails (count float32), head scales (count float32), head errors (count float32),
heads (count x width int8; matrix.quantize_heads), padding to 4 KiB, float rows (count x dim
float32). The checksum covers all but the float rows and the heads (those are 6/7 of what a
start reads, and a damaged head only costs its row a place among the candidates): 256 heads
are compared with their quantized rows, and matrix_sync compares a few rows with vec0.
Rows damaged elsewhere pass those; `memwal-mcp check` compares every one (matrix_check).
Format 01 held float32 heads (268 MB to read at 1M: 2.5 s from disk); it is rebuilt.
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

_MAGIC = b"MWLANE02"
_HEADER = struct.Struct("<8sIIqqqI")  # magic, dim, head width, version, count, database inode, crc32
_PAGE = 4096
_READ_ROWS = 1 << 16  # heads read and turned into float32 this many rows at a time (4 MiB of int8)


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
    """(name, offset, bytes) of the parts before the float rows (all but the last, the heads,
    in the checksum), where the float rows start, the file size."""
    parts, at = [], _PAGE
    for name, size in (
        ("basis", dim * dim * 4),
        ("rowids", count * 8),
        ("tails", count * 4),
        ("scales", count * 4),
        ("errors", count * 4),
        ("heads", count * width),
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
    """Replace the sidecar by this matrix (rotated, with its heads quantized from the float
    rows as they are written), atomically: a crash leaves the old file or the new one, never
    half of one. Call under `locked(path)`."""
    assert lane.basis is not None and lane.heads is not None
    count, dim, width = lane.size, lane.dim, lane.heads.shape[1]
    parts, floats_at, size = _offsets(dim, width, count)
    at = {name: offset for name, offset, _ in parts}
    scales = np.empty(count, dtype="<f4")
    errors = np.empty(count, dtype="<f4")
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.ftruncate(fd, size)  # the padding reads as zeros
        lo = 0
        for rows in _rows_to_write(lane):
            codes, scales[lo : lo + len(rows)], errors[lo : lo + len(rows)] = matrix.quantized_heads(rows[:, :width])
            _pwrite(fd, rows.tobytes(), floats_at + lo * dim * 4)
            _pwrite(fd, codes.tobytes(), at["heads"] + lo * width)
            lo += len(rows)
        small = {
            "basis": lane.basis.astype("<f4").tobytes(),
            "rowids": lane.rowids[:count].astype("<i8").tobytes(),
            "tails": lane.tails[:count].astype("<f4").tobytes(),
            "scales": scales.tobytes(),
            "errors": errors.tobytes(),
        }
        crc = zlib.crc32(_HEADER.pack(_MAGIC, dim, width, lane.version, count, _inode(database), 0))
        for name, blob in small.items():
            crc = zlib.crc32(blob, crc)
            _pwrite(fd, blob, at[name])
        header = _HEADER.pack(_MAGIC, dim, width, lane.version, count, _inode(database), crc)
        _pwrite(fd, header.ljust(_PAGE, b"\0"), 0)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _pwrite(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


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


def _heads_agree(f: BinaryIO, heads: np.ndarray, scales: np.ndarray, floats_at: int, dim: int) -> bool:
    """Spread-out heads (codes and scale) are what their float rows quantize to. The heads are
    not in the checksum (64 MB at 1M); a damaged head only costs its row a place among the
    candidates, since every score returned comes from the float row."""
    count, width = heads.shape
    checked = np.linspace(0, count - 1, min(count, _HEAD_CHECKS)).astype(np.int64).tolist()
    matrix.will_need(f.fileno(), [floats_at + i * dim * 4 for i in checked], width * 4)
    for i in checked:
        row = np.frombuffer(os.pread(f.fileno(), width * 4, floats_at + i * dim * 4), dtype="<f4")
        if len(row) != width:
            return False
        codes, scale = matrix.quantize_heads(row[None])
        if not np.array_equal(codes[0], heads[i]) or scale[0] != scales[i]:
            return False
    return True


def read(path: Path, database: str, dim: int) -> LaneMatrix | None:
    """The lane as the sidecar holds it, its float rows mapped and its heads turned into
    float32; None if there is none or it cannot be trusted (then it is rebuilt)."""
    try:
        return opened(path, database, dim)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, struct.error) as exc:
        log.warning("lane file %s is unusable (%s); rebuilding it", path, exc)
        return None


def opened(path: Path, database: str, dim: int) -> LaneMatrix:
    """`read`, raising why the file cannot be trusted: check (matrix_check) names the reason."""
    with open(path, "rb", buffering=0) as f:
        header = f.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise ValueError("truncated header")
        magic, file_dim, width, version, count, inode, crc = _HEADER.unpack(header)
        if magic != _MAGIC:
            raise ValueError(f"format {magic!r}, not {_MAGIC!r}")
        if file_dim != dim or width != min(matrix.HEAD_DIMS, dim) or count <= 0:
            raise ValueError("not a lane file of this dimension")
        if inode != _inode(database):
            raise ValueError("written for another database file")
        parts, floats_at, size = _offsets(dim, width, count)
        if os.fstat(f.fileno()).st_size != size:
            raise ValueError("file size does not match its header")
        check = zlib.crc32(_HEADER.pack(magic, file_dim, width, version, count, inode, 0))
        kinds = {"basis": (np.float32, (dim, dim)), "rowids": (np.int64, (count,))}
        arrays: dict[str, np.ndarray] = {}
        for name, at, _ in parts[:-1]:  # read in place: no second copy
            kind, shape = kinds.get(name, (np.float32, (count,)))
            arrays[name] = np.empty(shape, dtype=kind)
            _read_into(f.fileno(), arrays[name], at, name)
            check = zlib.crc32(arrays[name].data.cast("B"), check)
        if check != crc:
            raise ValueError("checksum mismatch")
        heads = _read_heads(f.fileno(), parts[-1][1], count, width)
        if not _heads_agree(f, heads, arrays["scales"], floats_at, dim):
            raise ValueError("heads differ from their rows")
        fd = os.dup(f.fileno())
    lane = LaneMatrix(version, dim)
    lane.basis, lane.rowids, lane.tails = arrays["basis"], arrays["rowids"], arrays["tails"]
    lane.heads, lane.head_scales, lane.head_errors = heads, arrays["scales"], arrays["errors"]
    lane.size = count
    _map(path, fd, floats_at, lane)
    lane.slot.set_many(lane.rowids, 0)
    return lane


def _read_into(fd: int, array: np.ndarray, at: int, name: str) -> None:
    view = array.data.cast("B")
    while view:
        done = os.preadv(fd, [view], at)
        if done <= 0:
            raise ValueError(f"truncated {name}")
        view, at = view[done:], at + done


def _read_heads(fd: int, at: int, count: int, width: int) -> np.ndarray:
    """The int8 heads from `at`, cast to float32 a slice at a time (the int8 copy never exists
    whole). Nothing else: their scales are applied to the products (LaneMatrix.heads), so a
    restart at 1M spends 40 ms of CPU here, against 60 for copying format 01's float heads."""
    heads = np.empty((count, width), dtype=np.float32)
    codes = np.empty((min(count, _READ_ROWS), width), dtype=np.int8)
    for lo in range(0, count, _READ_ROWS):
        hi = min(count, lo + _READ_ROWS)
        _read_into(fd, codes[: hi - lo], at + lo * width, "heads")
        np.copyto(heads[lo:hi], codes[: hi - lo])
    return heads


def _map(path: Path, fd: int, floats_at: int, lane: LaneMatrix) -> None:
    rows = np.memmap(path, dtype="<f4", mode="c", offset=floats_at, shape=(lane.size, lane.dim))
    lane.blocks = [rows[lo : lo + matrix.BLOCK_ROWS] for lo in range(0, lane.size, matrix.BLOCK_ROWS)]
    lane.mapped = matrix.FileRows(fd, floats_at, lane.size, rows)


def rows_read(lane: LaneMatrix, lo: int, hi: int) -> np.ndarray:
    """Rows lo..hi as the mapped lane's file holds them, read with pread (not faulted in through
    the mapping, which would leave them in RSS): what check compares with the database."""
    file = lane.mapped
    assert file is not None and hi <= file.count
    rows = np.empty((hi - lo, lane.dim), dtype="<f4")
    _read_into(file.fd, rows, file.offset + lo * lane.dim * 4, "float rows")
    return rows


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
    """Zero the float row, head, scale and head error of each of these rowids in the sidecar
    (when it holds them), and update its checksum: the vector of a forgotten memory must be
    readable from no file. A file this cannot read (another format, a wrong size) is deleted
    instead: it may hold the row, and read() would only rebuild it. Call under `locked(path)`."""
    if path is None or not rowids or not path.exists():
        return
    with open(path, "r+b") as f:
        header = f.read(_HEADER.size)
        parsed = _HEADER.unpack(header) if len(header) == _HEADER.size else None
        if parsed is None or parsed[0] != _MAGIC or parsed[4] <= 0:
            unreadable = "not a lane file of this format"
        else:
            magic, dim, width, version, count, inode, _ = parsed
            parts, floats_at, size = _offsets(dim, width, count)
            unreadable = "" if os.fstat(f.fileno()).st_size == size else "its size does not match its header"
        if unreadable:
            log.warning("lane file %s cannot be erased from (%s); deleting it", path, unreadable)
            path.unlink()
            return
        at = {name: offset for name, offset, _ in parts}
        f.seek(at["rowids"])
        held = np.frombuffer(f.read(count * 8), dtype="<i8")
        positions = np.flatnonzero(np.isin(held, np.asarray(rowids, dtype=np.int64)))
        if not len(positions):
            return
        fd = f.fileno()
        for position in positions.tolist():
            os.pwrite(fd, b"\0" * (dim * 4), floats_at + position * dim * 4)
            os.pwrite(fd, b"\0" * width, at["heads"] + position * width)
            os.pwrite(fd, b"\0" * 4, at["scales"] + position * 4)
            os.pwrite(fd, b"\0" * 4, at["errors"] + position * 4)
        check = zlib.crc32(_HEADER.pack(magic, dim, width, version, count, inode, 0))
        for _, offset, length in parts[:-1]:
            f.seek(offset)
            check = zlib.crc32(f.read(length), check)
        os.pwrite(fd, _HEADER.pack(magic, dim, width, version, count, inode, check), 0)
        os.fsync(fd)
