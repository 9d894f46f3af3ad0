"""The lane matrix keeps its rows in blocks; search must not care where a block ends."""

from __future__ import annotations

import numpy as np
import pytest

from memwal_mcp.store import matrix


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(matrix, "BLOCK_ROWS", 16)  # many block boundaries with few rows


def test_nearest_over_many_blocks_matches_a_plain_scan(small_blocks):
    rng = np.random.default_rng(3)
    dim = 8
    lane = matrix._Lane(0, dim)
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
    many = matrix.nearest_many_in(lane, _unit(rng, 3, dim), 4)
    assert all(len(hits) == 4 for hits in many)
    rows = lane.rows([lane.slot[int(i)] for i in ids[:5]])
    assert np.allclose(rows, plain[:5])


def test_growing_adds_blocks_without_copying_the_full_ones(small_blocks):
    lane = matrix._Lane(0, 4)
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
    lane = matrix._Lane(0, 8)
    lane.append(np.arange(101, dtype=np.int64), vectors)
    query = _unit(rng, 1, 8)[0]
    assert lane.scores(query) == pytest.approx(vectors @ query, abs=1e-6)
