"""The lane matrix keeps its rows in blocks; search must not care where a block ends."""

from __future__ import annotations

import numpy as np
import pytest

from memwal_mcp.store.sqlite import matrix, matrix_slots, matrix_sync


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(matrix, "BLOCK_ROWS", 16)  # many block boundaries with few rows


def test_nearest_over_many_blocks_matches_a_plain_scan(small_blocks):
    rng = np.random.default_rng(3)
    dim = 8
    lane = matrix.LaneMatrix(0, dim)
    truth: dict[int, np.ndarray] = {}
    first = _unit(rng, 37, dim)  # a bulk load that ends inside the third block
    lane.reserve(20)  # a planned size that turns out too small
    lane.append(np.arange(1, 38, dtype=np.int64), first)
    truth.update({i + 1: first[i] for i in range(37)})
    for step in range(300):  # then changes one at a time: new rows, replaced rows, dropped rows
        rowid = int(rng.integers(1, 80))
        if step % 3 == 2:
            lane.drop(rowid)
            truth.pop(rowid, None)
        else:
            vector = _unit(rng, 1, dim)[0]
            lane.put(rowid, vector)
            truth[rowid] = vector
        assert lane.size == len(truth)

    ids = np.array(sorted(truth))
    plain = np.stack([truth[i] for i in ids])
    for query in _unit(rng, 5, dim):
        expected = plain @ query
        order = ids[np.argsort(-expected, kind="stable")][:10]
        got = matrix.nearest_in(lane, query, 10)
        assert [rowid for rowid, _ in got] == order.tolist()
        assert [s for _, s in got] == pytest.approx(sorted(expected, reverse=True)[:10], abs=1e-6)
    queries = _unit(rng, 6, dim)
    for hits, query in zip(matrix.nearest_many_in(lane, queries, 4), queries):
        expected = plain @ query
        assert [rowid for rowid, _ in hits] == ids[np.argsort(-expected, kind="stable")][:4].tolist()
    for hits, query in zip(matrix.nearest_many_in(lane, queries, 4, min_score=0.3), queries):
        expected = plain @ query
        above = [(int(i), float(s)) for i, s in zip(ids, expected) if s >= 0.3]
        best = sorted(above, key=lambda hit: -hit[1])[:4]
        assert [rowid for rowid, _ in hits] == [rowid for rowid, _ in best]
        assert [s for _, s in hits] == pytest.approx([s for _, s in best], abs=1e-6)
    rows = lane.rows([lane.slot[int(i)] for i in ids[:5]])
    assert np.allclose(rows, plain[:5])


def test_growing_adds_blocks_without_copying_the_full_ones(small_blocks):
    lane = matrix.LaneMatrix(0, 4)
    lane.append(np.arange(40, dtype=np.int64), np.ones((40, 4), dtype=np.float32))
    full = [id(block) for block in lane.blocks[:2]]
    lane.put(1000, np.zeros(4, dtype=np.float32))
    lane.append(np.arange(2000, 2030, dtype=np.int64), np.ones((30, 4), dtype=np.float32))
    assert [id(block) for block in lane.blocks[:2]] == full
    assert all(len(block) == 16 for block in lane.blocks[:-1])
    assert lane.size == 71


def test_a_lane_scanned_in_pieces_on_several_threads_scores_every_row(small_blocks, monkeypatch):
    monkeypatch.setattr(matrix, "SPLIT_ROWS", 10)
    rng = np.random.default_rng(5)
    vectors = _unit(rng, 101, 8)  # 6 full blocks and a partial one, cut again between threads
    lane = matrix.LaneMatrix(0, 8)
    lane.append(np.arange(101, dtype=np.int64), vectors)
    query = _unit(rng, 1, 8)[0]
    assert lane.scores(query) == pytest.approx(vectors @ query, abs=1e-6)


async def test_a_lane_read_by_chunks_holds_what_vec0_returns_row_by_row(make_settings, embedder):
    """The fast load reads sqlite-vec's chunk tables; it must agree with vec0 itself,
    forgotten memories and other lanes included."""
    from memwal_mcp.service import MemoryService
    from memwal_mcp.store.sqlite.connection import connect

    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        for i in range(30):
            await svc.remember(
                "local",
                f"Storage node {i} sits in rack {i % 7} of hall {i % 3}",
                namespace="ops" if i % 2 else "default",
            )
        await svc.worker.run_once()
        await svc.worker.run_once()
        hits = (await svc.recall("local", "Storage node rack hall", limit=8, namespace="ops")).hits
        for hit in hits[:3]:
            await svc.forget("local", hit.id)

    conn = connect(settings.db_path)
    try:
        table, dim = conn.execute("SELECT vector_table, dim FROM embedding_meta").fetchone()
        (lane,) = conn.execute("SELECT id FROM lanes WHERE namespace = 'ops'").fetchone()
        by_chunks = matrix.LaneMatrix(0, dim)
        assert matrix_sync._load_chunks(conn, table, dim, lane, by_chunks) is True
        rows = conn.execute(f"SELECT rowid, embedding FROM {table} WHERE lane_id = ?", (lane,)).fetchall()
        every = [rowid for (rowid,) in conn.execute("SELECT rowid FROM memories")]  # forgotten and other lane too
        picked = matrix_sync._vectors_by_chunk(conn, table, dim, every)
        looked_up = {
            rowid: np.frombuffer(blob, dtype=np.float32)
            for rowid, blob in conn.execute(
                f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({','.join('?' * len(every))})", every
            )
        }
    finally:
        conn.close()
    assert by_chunks.size == len(rows) == 12  # 15 remembered in "ops", 3 forgotten
    for rowid, blob in rows:
        assert np.array_equal(by_chunks.rows([by_chunks.slot[rowid]])[0], np.frombuffer(blob, dtype=np.float32))
    assert picked.keys() == looked_up.keys() and len(picked) == 27  # 30 remembered, 3 forgotten
    assert all(np.array_equal(picked[rowid], looked_up[rowid]) for rowid in picked)


async def test_after_a_bulk_change_the_lane_is_read_again_and_search_sees_all_of_it(
    make_settings, embedder, monkeypatch
):
    from memwal_mcp.service import MemoryService

    monkeypatch.setattr(matrix_sync, "_LOAD_ROWS", 4)  # so 20 new memories count as a bulk change
    settings = make_settings(recall={"mode": "dense"})
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        for i in range(12):
            await svc.remember("local", f"Printer {i} on floor {i} needs toner type T{i}")
        await svc.worker.run_once()
        assert len((await svc.recall("local", "printer toner", limit=50)).hits) == 12  # the lane is cached
        cached = matrix_sync._lanes[next(k for k in matrix_sync._lanes if k[0].startswith(str(settings.db_path)))]
        for i in range(20):
            await svc.remember("local", f"Meeting room {i} seats {i + 4} people and has a screen")
        await svc.worker.run_once()
        result = await svc.recall("local", "meeting room seats", limit=50, min_score=0)  # the printers too
        assert len(result.hits) == 32
        fresh = matrix_sync._lanes[next(k for k in matrix_sync._lanes if k[0].startswith(str(settings.db_path)))]
        assert fresh is not cached and fresh.size == 32


def test_slots_agree_with_a_dict_through_dense_and_sparse_phases(monkeypatch):
    monkeypatch.setattr(matrix_slots._Slots, "DENSE_MIN", 16)
    rng = np.random.default_rng(11)
    slots, truth = matrix_slots._Slots(), {}
    next_rowid = 1000
    modes = set()
    for step in range(3000):
        action = rng.random()
        if action < 0.6:  # new rows, mostly increasing rowids, now and then a bulk append
            n = int(rng.integers(1, 40)) if rng.random() < 0.1 else 1
            rowids = np.arange(next_rowid, next_rowid + n, dtype=np.int64)
            next_rowid += n + int(rng.integers(0, 3))
            slots.set_many(rowids, len(truth))
            truth.update({int(r): len(truth) + j for j, r in enumerate(rowids)})
        elif action < 0.9 and truth:  # a row leaves; the last one moves into its index
            rowid = int(rng.choice(list(truth)))
            assert slots.pop(rowid) == truth.pop(rowid)
        else:  # a far-away rowid makes the lane sparse (back to a dict) now and then
            rowid = next_rowid + int(rng.integers(10_000, 1_000_000)) if step == 1500 else int(rng.integers(0, 500))
            if rowid not in truth:
                slots.set(rowid, len(truth))
                truth[rowid] = len(truth)
        assert len(slots) == len(truth)
        modes.add("dict" if slots._dict is not None else "array")
        probe = int(rng.integers(0, next_rowid + 10))
        assert slots.get(probe) == truth.get(probe)
    assert all(slots[r] == i for r, i in truth.items())
    assert slots.pop(-5) is None and -5 not in slots
    assert modes == {"dict", "array"}


def test_a_rotated_lane_finds_exactly_the_nominees_a_plain_scan_finds(small_blocks, monkeypatch):
    """Rows kept in the lane's PCA basis: scores unchanged, and the bound that lets curation
    skip full products never drops a vector at or above the threshold."""
    monkeypatch.setattr(matrix, "PREFIX_DIMS", 4)
    rng = np.random.default_rng(21)
    dim = 24
    centres = _unit(rng, 6, dim)  # clustered, like real embeddings: near-duplicates exist
    vectors = centres[rng.integers(0, 6, 300)] + 0.25 * rng.standard_normal((300, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    lane = matrix.LaneMatrix(0, dim)
    lane.append(np.arange(1, 201, dtype=np.int64), vectors[:200])
    lane.rotate()
    assert lane.basis is not None
    for i in range(200, 300):  # rows that arrive after the rotation, and some that leave
        lane.put(i + 1, vectors[i])
    for rowid in (5, 17, 250):
        lane.drop(rowid)
    ids = np.array(sorted(set(range(1, 301)) - {5, 17, 250}))
    plain = vectors[ids - 1]
    assert np.allclose(lane.rows([lane.slot[int(i)] for i in ids[:7]]), plain[:7], atol=1e-5)

    queries = vectors[rng.integers(0, 300, 20)] + 0.05 * rng.standard_normal((20, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for query in queries[:5]:
        assert lane.scores(query)[[lane.slot[int(i)] for i in ids]] == pytest.approx(plain @ query, abs=1e-5)
        assert lane.dots([lane.slot[int(i)] for i in ids[:9]], query) == pytest.approx(plain[:9] @ query, abs=1e-5)
    for threshold in (0.5, 0.8, 0.9):
        for hits, query in zip(matrix.nearest_many_in(lane, queries, 5, min_score=threshold), queries):
            expected = plain @ query
            above = sorted(((float(s), int(i)) for i, s in zip(ids, expected) if s >= threshold), reverse=True)[:5]
            assert [rowid for rowid, _ in hits] == [rowid for _, rowid in above]
            assert [s for _, s in hits] == pytest.approx([s for s, _ in above], abs=1e-5)
