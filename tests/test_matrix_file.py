"""A big lane's heads and sidecar file: searches rank as the exact scan does, a restart maps
the file instead of reading every vector, and a forgotten memory's bytes leave the file."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import matrix, matrix_file, matrix_sync
from memwal_mcp.store.sqlite.connection import connect

pytestmark = pytest.mark.slow


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_heads_then_exact_rescoring_rank_as_the_exact_scan_on_a_small_lane(monkeypatch):
    """Vectors in a 12-dimensional subspace: after the rotation the heads hold all of each
    vector, so the candidates, and then the exact top k, must be the exact scan's."""
    monkeypatch.setattr(matrix, "HEAD_DIMS", 16)
    monkeypatch.setattr(matrix, "PREFIX_DIMS", 8)
    monkeypatch.setattr(matrix, "RESCORE_ROWS", 40)
    rng = np.random.default_rng(5)
    dim = 48
    mix = rng.standard_normal((12, dim)).astype(np.float32)
    vectors = _unit(rng.standard_normal((400, 12)).astype(np.float32) @ mix)
    lane = matrix.LaneMatrix(0, dim)
    lane.append(np.arange(1, 301, dtype=np.int64), vectors[:300])
    lane.rotate()
    lane.keep_heads()
    for i in range(300, 400):  # rows after the heads were taken, and some that leave
        lane.put(i + 1, vectors[i])
    for rowid in (3, 77, 390):
        lane.drop(rowid)
    ids = np.array(sorted(set(range(1, 401)) - {3, 77, 390}))
    queries = _unit(rng.standard_normal((30, 12)).astype(np.float32) @ mix)
    for query in queries:
        exact = vectors[ids - 1] @ query
        order = np.argsort(-exact, kind="stable")[:10]
        hits = matrix.nearest_in(lane, query, 10)
        assert [rowid for rowid, _ in hits] == [int(ids[i]) for i in order]
        assert [s for _, s in hits] == pytest.approx([float(exact[i]) for i in order], abs=1e-5)
    # Curation's threshold search reads the heads instead of the rows: the same nominees.
    for hits, query in zip(matrix.nearest_many_in(lane, queries, 5, min_score=0.5), queries):
        exact = vectors[ids - 1] @ query
        above = sorted(((float(s), int(i)) for i, s in zip(ids, exact) if s >= 0.5), reverse=True)[:5]
        assert [rowid for rowid, _ in hits] == [rowid for _, rowid in above]


def test_rows_changed_after_mapping_are_rescored_from_memory_not_from_the_file(tmp_path, monkeypatch):
    """The file keeps the rows as written; a row this process moved or replaced since must be
    read from its copy-on-write mapping, never from the file."""
    monkeypatch.setattr(matrix, "HEAD_DIMS", 16)
    monkeypatch.setattr(matrix, "RESCORE_ROWS", 40)
    rng = np.random.default_rng(9)
    dim = 32
    mix = rng.standard_normal((10, dim)).astype(np.float32)
    vectors = _unit(rng.standard_normal((200, 10)).astype(np.float32) @ mix)
    lane = matrix.LaneMatrix(1, dim)
    lane.append(np.arange(1, 201, dtype=np.int64), vectors)
    lane.rotate()
    lane.keep_heads()
    database = tmp_path / "memwal.db"
    database.write_bytes(b"")
    path = tmp_path / "lane.vec"
    matrix_file.write(path, str(database), lane)
    mapped = matrix_file.read(path, str(database), dim)
    assert mapped is not None and mapped.mapped is not None
    replaced = _unit(rng.standard_normal((1, 10)).astype(np.float32) @ mix)[0]
    mapped.drop(17)  # row 199 moves into row 16
    mapped.put(40, replaced)
    vectors[39] = replaced
    ids = np.array([i for i in range(1, 201) if i != 17])
    for query in np.vstack([_unit(rng.standard_normal((20, 10)).astype(np.float32) @ mix), replaced]):
        exact = vectors[ids - 1] @ query
        order = np.argsort(-exact, kind="stable")[:8]
        assert [pk for pk, _ in matrix.nearest_in(mapped, query, 8)] == [int(ids[i]) for i in order]


def test_the_threshold_search_finds_every_row_at_its_bar_although_heads_are_int8(monkeypatch):
    """Heads are int8 codes, so a head's product with the query can fall below the bar while
    the row's exact cosine is above it. Rows crowd around the bar here, with heads spanning
    all dimensions (the bound is the quantized product alone): none may be missed."""
    dim = 24
    monkeypatch.setattr(matrix, "HEAD_DIMS", dim)
    monkeypatch.setattr(matrix, "PREFIX_DIMS", dim)
    rng = np.random.default_rng(11)
    queries = _unit(rng.standard_normal((8, dim)).astype(np.float32))
    near = [q + rng.uniform(0.55, 0.75, (120, 1)) * _unit(rng.standard_normal((120, dim))) for q in queries]
    vectors = _unit(np.vstack(near).astype(np.float32))
    lane = matrix.LaneMatrix(0, dim)
    lane.append(np.arange(1, len(vectors) + 1, dtype=np.int64), vectors)
    lane.rotate()
    lane.keep_heads()
    assert lane.heads is not None and float(lane.head_errors[: lane.size].max()) > 0  # the heads are lossy
    for hits, query in zip(matrix.nearest_many_in(lane, queries, 500, min_score=0.8), queries):
        exact = vectors @ query
        above = sorted(((float(s), i + 1) for i, s in enumerate(exact) if s >= 0.8), reverse=True)
        assert len(above) > 20
        assert [rowid for rowid, _ in hits] == [rowid for _, rowid in above]


def test_a_head_in_the_file_is_what_its_float_row_quantizes_to(tmp_path, monkeypatch):
    """The file holds int8 heads and per-row scales; read back they equal the heads of a lane
    built in memory from the same rows, and the recall ranks as the exact scan."""
    monkeypatch.setattr(matrix, "HEAD_DIMS", 16)
    monkeypatch.setattr(matrix, "RESCORE_ROWS", 40)
    rng = np.random.default_rng(13)
    dim = 32
    mix = rng.standard_normal((10, dim)).astype(np.float32)  # heads of 16 then hold all of each vector
    vectors = _unit(rng.standard_normal((300, 10)).astype(np.float32) @ mix)
    lane = matrix.LaneMatrix(1, dim)
    lane.append(np.arange(1, 301, dtype=np.int64), vectors)
    lane.rotate()
    lane.keep_heads()
    database = tmp_path / "memwal.db"
    database.write_bytes(b"")
    path = tmp_path / "lane.vec"
    matrix_file.write(path, str(database), lane)
    parts, floats_at, size = matrix_file._offsets(dim, 16, 300)
    assert path.stat().st_size == size and dict((n, b) for n, _, b in parts)["heads"] == 300 * 16  # a byte a head
    mapped = matrix_file.read(path, str(database), dim)
    assert mapped is not None and mapped.heads is not None and lane.heads is not None
    for name in ("heads", "head_scales", "head_errors"):
        assert np.array_equal(getattr(mapped, name)[:300], getattr(lane, name)[:300])
    values = mapped.heads[:300] * mapped.head_scales[:300, None]  # codes times their row's scale
    assert float(np.abs(values - np.asarray(mapped.blocks[0][:300, :16])).max()) < 0.01
    for query in _unit(rng.standard_normal((10, 10)).astype(np.float32) @ mix):
        exact = vectors @ query
        best = [int(i) + 1 for i in np.argsort(-exact, kind="stable")[:5]]
        assert [pk for pk, _ in matrix.nearest_in(mapped, query, 5)] == best


@pytest.fixture
def small_thresholds(monkeypatch):
    monkeypatch.setattr(matrix_sync, "ROTATE_ROWS", 8)
    monkeypatch.setattr(matrix_sync, "HEADS_ROWS", 8)
    monkeypatch.setattr(matrix, "RESCORE_ROWS", 12)
    monkeypatch.setattr(matrix, "PREFIX_DIMS", 8)


FACTS = [f"Server {i} in rack {i % 5} runs service {name}" for i, name in enumerate("abcdefghijklmnopqrstuvwx")]


def _lane(settings):
    conn = connect(settings.db_path)
    try:
        table, dim = conn.execute("SELECT vector_table, dim FROM embedding_meta").fetchone()
        (lane,) = conn.execute("SELECT id FROM lanes").fetchone()
        return table, dim, lane
    finally:
        conn.close()


def _restart() -> None:
    """A new process has no cached matrices."""
    matrix_sync._lanes.clear()


def _sync(settings):
    table, dim, lane = _lane(settings)
    conn = connect(settings.db_path)
    try:
        return matrix_sync.synced(conn, table, dim, lane)
    finally:
        conn.close()


def _header(path):
    with open(path, "rb") as f:
        return struct.unpack("<8sIIqqqI", f.read(struct.calcsize("<8sIIqqqI")))


def _write_format_01(path: Path, target: Path) -> None:
    """`path`'s lane as format 01 wrote it (float32 heads, their own checksum rule), to `target`."""
    magic, dim, width, version, count, inode, _ = _header(path)
    parts, floats_at, _ = matrix_file._offsets(dim, width, count)
    data = path.read_bytes()
    at = {name: (offset, length) for name, offset, length in parts}
    small = [data[at[name][0] : sum(at[name])] for name in ("basis", "rowids", "tails")]
    floats = data[floats_at:]
    rows = np.frombuffer(floats, dtype="<f4").reshape(count, dim)
    small.append(np.ascontiguousarray(rows[:, :width]).tobytes())
    header = struct.Struct("<8sIIqqqI")
    crc = zlib.crc32(header.pack(b"MWLANE01", dim, width, version, count, inode, 0))
    for blob in small[:-1]:
        crc = zlib.crc32(blob, crc)
    body = b"".join(small)
    pad = -(-(4096 + len(body)) // 4096) * 4096 - 4096 - len(body)
    old = header.pack(b"MWLANE01", dim, width, version, count, inode, crc).ljust(4096, b"\0") + body
    target.write_bytes(old + b"\0" * pad + floats)


async def _filled(settings, embedder) -> MemoryService:
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        for text in FACTS:
            await svc.remember("local", text)
        await svc.worker.run_once()
        await svc.recall("local", "rack", limit=3)  # loads the lane: it is written to its file
    return svc


async def _filled_lane(settings, embedder) -> tuple[str, int, int, Path]:
    """The filled store's vector table, dimension, lane and the lane's sidecar path."""
    await _filled(settings, embedder)
    table, dim, lane = _lane(settings)
    path = matrix_file.path_for(str(settings.db_path), table, lane)
    assert path is not None
    return table, dim, lane, path


def _assert_exact(lane_matrix: matrix.LaneMatrix, vectors: dict[int, np.ndarray], query: np.ndarray) -> None:
    """The lane's top 5 are the stored vectors' true top 5, with their exact cosines."""
    hits = matrix.nearest_in(lane_matrix, query, 5)
    assert [s for _, s in hits] == pytest.approx([float(vectors[pk] @ query) for pk, _ in hits], abs=1e-5)
    assert [pk for pk, _ in hits] == sorted(vectors, key=lambda pk: -float(vectors[pk] @ query))[:5]


async def test_the_lane_file_is_written_and_a_restart_maps_it_without_reading_every_vector(
    make_settings, embedder, small_thresholds
):
    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    assert path.exists()
    written = path.stat()
    before = _sync(settings)
    _restart()
    after = _sync(settings)
    assert after is not before and isinstance(after.mapped, matrix.FileRows) and after.heads is not None
    assert path.stat().st_ino == written.st_ino and path.stat().st_mtime_ns == written.st_mtime_ns  # not rebuilt
    assert sorted(after.rowids[: after.size].tolist()) == sorted(before.rowids[: before.size].tolist())
    query = embedder.embed_query("which rack runs service k")
    mapped_hits, loaded_hits = matrix.nearest_in(after, query, 5), matrix.nearest_in(before, query, 5)
    assert [pk for pk, _ in mapped_hits] == [pk for pk, _ in loaded_hits]
    assert [c for _, c in mapped_hits] == pytest.approx([c for _, c in loaded_hits], abs=1e-6)
    exact = after.scores(query)
    best = [int(after.rowids[i]) for i in np.argsort(-exact, kind="stable")[:5]]
    assert [rowid for rowid, _ in matrix.nearest_in(after, query, 5)] == best


@pytest.mark.parametrize("rewritten", [False, True])
async def test_a_stale_file_is_brought_up_to_date_and_never_answers_past_its_version(
    make_settings, embedder, small_thresholds, monkeypatch, rewritten
):
    if rewritten:  # far enough behind to be written again, from the mapped rows and the changed ones
        monkeypatch.setattr(matrix_sync, "REWRITE_CHANGES", 0)
    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    old_version = _header(path)[3]
    _restart()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", "The coffee grinder in the kitchen is set to fine")
        await svc.worker.run_once()
    _restart()
    fresh = _sync(settings)
    assert fresh.version > old_version and fresh.size == len(FACTS) + 1
    hits = matrix.nearest_in(fresh, embedder.embed_query("coffee grinder setting"), 1)
    conn = connect(settings.db_path)
    try:
        (body,) = conn.execute("SELECT body FROM memories WHERE rowid = ?", (hits[0][0],)).fetchone()
    finally:
        conn.close()
    assert body == "The coffee grinder in the kitchen is set to fine"
    assert (_header(path)[3] == fresh.version) is rewritten
    _restart()
    again = _sync(settings)
    query = embedder.embed_query("which rack runs service k")
    exact = again.scores(query)
    best = [int(again.rowids[i]) for i in np.argsort(-exact, kind="stable")[:5]]
    assert [pk for pk, _ in matrix.nearest_in(again, query, 5)] == best
    assert again.size == len(FACTS) + 1


@pytest.mark.parametrize("damage", ["truncate", "checksum", "scales", "heads", "float row", "deleted", "format 01"])
async def test_a_damaged_or_deleted_file_is_rebuilt(make_settings, embedder, small_thresholds, damage):
    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    expected = sorted(_sync(settings).rowids[: len(FACTS)].tolist())
    size = path.stat().st_size
    if damage == "truncate":
        with open(path, "r+b") as f:
            f.truncate(size - 100)
    elif damage == "deleted":
        path.unlink()
    elif damage == "format 01":  # the lane as the float32-heads format wrote it: rebuilt, never misread
        _write_format_01(path, path)
        assert path.stat().st_size != size
    else:
        parts, floats_at, _ = matrix_file._offsets(dim, min(matrix.HEAD_DIMS, dim), len(FACTS))
        at = {name: offset for name, offset, _ in parts} | {"checksum": 4096 + 10, "float row": floats_at}
        with open(path, "r+b") as f:
            f.seek(at[damage] + (1 if damage == "heads" else 0))  # the basis, a scale, row 0's head, its row
            f.write(b"\x7f\x7f\x7f\x7f")
    _restart()
    fresh = _sync(settings)
    assert sorted(fresh.rowids[: fresh.size].tolist()) == expected
    assert path.exists() and path.stat().st_size == size and _header(path)[0] == b"MWLANE02"
    reread = matrix_file.read(path, str(settings.db_path), dim)
    assert reread is not None and np.array_equal(np.asarray(reread.blocks[0][:1]), np.asarray(fresh.blocks[0][:1]))


async def test_forget_zeroes_the_memory_row_in_the_lane_file(make_settings, embedder, small_thresholds):
    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    _restart()
    mapped = _sync(settings)
    position = 7
    rowid = int(mapped.rowids[position])
    stored = np.asarray(mapped.blocks[0][position]).tobytes()  # the row as the file holds it (rotated)
    assert stored in path.read_bytes()
    left_by_reindex = path.with_name(path.name.replace(f".{table}.vec", ".memory_vectors_old.vec"))
    left_by_reindex.write_bytes(path.read_bytes())  # a sidecar of the vector table before a reindex
    older_format = path.with_name(path.name.replace(f".{table}.vec", ".memory_vectors_older.vec"))
    _write_format_01(path, older_format)  # one an older release left, in a format erase cannot update
    assert stored in older_format.read_bytes()
    conn = connect(settings.db_path)
    try:
        (memory_id,) = conn.execute("SELECT id FROM memories WHERE rowid = ?", (rowid,)).fetchone()
    finally:
        conn.close()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.forget("local", memory_id)
    width = min(matrix.HEAD_DIMS, dim)
    parts, floats_at, _ = matrix_file._offsets(dim, width, len(FACTS))
    at = {name: offset for name, offset, _ in parts}
    data = path.read_bytes()
    assert stored not in data and stored not in left_by_reindex.read_bytes()
    assert not older_format.exists()
    assert data[floats_at + position * dim * 4 : floats_at + (position + 1) * dim * 4] == b"\0" * (dim * 4)
    assert data[at["heads"] + position * width : at["heads"] + (position + 1) * width] == b"\0" * width
    for name in ("scales", "errors"):
        assert data[at[name] + position * 4 : at[name] + (position + 1) * 4] == b"\0" * 4
    assert data[at["heads"] : at["heads"] + width] != b"\0" * width  # the other rows keep theirs
    _restart()  # the file still passes its checks, and the forgotten memory is not in the lane
    fresh = _sync(settings)
    assert fresh.mapped is not None and rowid not in fresh.slot and fresh.size == len(FACTS) - 1


def _stored_vectors(settings, table: str) -> dict[int, np.ndarray]:
    """The database's own vectors (vec0), which the lane file must hold."""
    conn = connect(settings.db_path)
    try:
        rows = conn.execute(f"SELECT rowid, embedding FROM {table}").fetchall()
    finally:
        conn.close()
    return {rowid: np.frombuffer(blob, dtype=np.float32) for rowid, blob in rows}


def _damage_tail(path: Path, lane: matrix.LaneMatrix, position: int, toward: np.ndarray) -> None:
    """Write 50.0 (signed as `toward`, the rotated query) over a row's coordinates past its
    head, in place: same size, header, checksum and head, so a load's checks all pass."""
    width = min(matrix.HEAD_DIMS, lane.dim)
    _, floats_at, _ = matrix_file._offsets(lane.dim, width, lane.size)
    tail = np.where(toward[width:] >= 0, 50.0, -50.0).astype("<f4")
    with open(path, "r+b") as f:
        f.seek(floats_at + position * lane.dim * 4 + width * 4)
        f.write(tail.tobytes())


async def test_check_finds_rows_damaged_inside_the_lane_file_and_deletes_it_so_recall_is_exact_again(
    make_settings, embedder, small_thresholds
):
    """Rows damaged in the middle of the file pass a restart's checks (they read a sample);
    check compares every row with vec0, names the file, and deletes it, and the lane -- even
    the one this process still maps -- is read again: the scores are the exact cosines."""
    from memwal_mcp import doctor
    from memwal_mcp.store.sqlite.health import probe_database

    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    _restart()
    mapped = _sync(settings)
    query = embedder.embed_query("which rack runs service k")
    rotated = mapped._in_basis(query)
    sampled = {0, mapped.size // 2, mapped.size - 1}  # the rows a load compares with vec0
    hits = matrix.nearest_in(mapped, query, 5)
    victim = next(int(mapped.slot[pk]) for pk, _ in hits[1:] if int(mapped.slot[pk]) not in sampled)
    _damage_tail(path, mapped, victim, rotated)
    inode = path.stat().st_ino
    _restart()
    damaged = _sync(settings)
    assert path.stat().st_ino == inode  # the load trusted it: the defect
    assert matrix.nearest_in(damaged, query, 1)[0][1] > 1.5  # a cosine no unit vector has

    database = probe_database(settings.db_path)  # doctor: reports, changes nothing
    assert database is not None and database.integrity is not None
    lines = [p for p in database.integrity.problems if p.code == "lane_file_damaged"]
    assert len(lines) == 1 and path.name in lines[0].detail and "1 of 24 rows differ" in lines[0].detail
    assert doctor.check_lane_files(database.integrity).status == "fail"
    assert doctor.check_integrity(database.integrity).status == "ok"
    assert path.exists()

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        problems, _ = await svc.store.read(lambda reader: reader.check())
    found = [p for p in problems if p.code == "lane_file_damaged"]
    assert len(found) == 1 and path.name in found[0].detail and "deleted" in found[0].detail
    assert found[0].severity == "error"

    vectors = _stored_vectors(settings, table)
    again = _sync(settings)  # no restart: the cached lane's file is gone, so it is read again
    assert again is not damaged and path.exists() and path.stat().st_ino != inode
    _assert_exact(again, vectors, query)

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        problems, _ = await svc.store.read(lambda reader: reader.check())
    clean = [p for p in problems if p.code.startswith("lane_file")]
    assert [p.code for p in clean] == ["lane_file"] and path.name in clean[0].detail
    assert not [p for p in problems if p.severity == "error"]


async def test_check_deletes_a_lane_file_a_load_would_refuse_so_a_server_mapping_it_reads_the_lane_again(
    make_settings, embedder, small_thresholds
):
    """A file damaged after a server mapped it: a load would refuse it, but the server goes on
    reading it. check must say so as an error and delete it (doctor only reports), and the
    lane is read again from the database: exact scores."""
    from memwal_mcp import doctor
    from memwal_mcp.store.sqlite.health import probe_database

    settings = make_settings(recall={"mode": "dense"})
    table, dim, lane, path = await _filled_lane(settings, embedder)
    _restart()
    mapped = _sync(settings)
    size = path.stat().st_size
    with open(path, "r+b") as f:  # the tail (float rows) zeroed in place: same inode, same size
        f.seek(size - 16384)
        f.write(b"\0" * 16384)

    database = probe_database(settings.db_path)
    assert database is not None and database.integrity is not None
    (line,) = [p for p in database.integrity.problems if p.code == "lane_file_unusable"]
    assert line.severity == "error" and path.name in line.detail and "memwal-mcp check" in line.detail
    assert doctor.check_lane_files(database.integrity).status == "fail"
    assert path.exists()

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        problems, _ = await svc.store.read(lambda reader: reader.check())
    (line,) = [p for p in problems if p.code == "lane_file_unusable"]
    assert line.severity == "error" and "deleted" in line.detail

    vectors = _stored_vectors(settings, table)
    query = embedder.embed_query("which rack runs service k")
    again = _sync(settings)
    assert again is not mapped
    _assert_exact(again, vectors, query)
