"""HNSW indexes for big lanes on a real PostgreSQL: built once a lane is big (here 200 rows,
`hnsw_min_rows` lowered), used by searches (EXPLAIN), close to the exact top k, never fewer
than k when k exist, dropped below a quarter, built once by two stores racing, carried by a
reindex, reported by check."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from memwal_mcp import doctor
from memwal_mcp.config import load_settings
from memwal_mcp.store import StoreWriter
from memwal_mcp.store.postgres import lane_indexes
from memwal_mcp.store.postgres.backend import PostgresStore
from memwal_mcp.store.postgres.knn import LaneSearch

from ..store_contract.helpers import DIM, T0, lane_of, prepare_vectors, remember, unit_vectors

MIN_ROWS = 200
# Mean overlap of the indexed top 10 with the exact top 10 that the graph must reach here (300
# rows, ef_search 400: it sees nearly every row, so anything less is a wrong query, not HNSW).
OVERLAP_AT_10 = 0.95


@pytest.fixture
async def small_threshold(pg_url: str) -> AsyncIterator[PostgresStore]:
    """A store whose lanes count as big from 200 rows, with no pass in the background (each test
    runs the passes it means)."""
    store = PostgresStore(pg_url, hnsw_min_rows=MIN_ROWS, maintain_every_s=None)
    await store.open()
    yield store
    await store.close()


def _fill(w: StoreWriter, vectors: np.ndarray, namespace: str = "default", start: int = 0) -> list[int]:
    prepare_vectors(w)
    return [
        remember(w, "alice", namespace, f"memory {namespace} {start + i}", vector=v, at=T0 + start + i).pk
        for i, v in enumerate(vectors)
    ]


def _near(rng: np.random.Generator, queries: np.ndarray, per_query: int, spread: float) -> np.ndarray:
    noisy = np.repeat(queries, per_query, axis=0) + spread * rng.standard_normal((len(queries) * per_query, DIM))
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def _exact(pks: list[int], vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    order = np.argsort(-(vectors @ query), kind="stable")
    return [pks[i] for i in order[:k]]


def _connect(url: str) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=True)
    register_vector(conn)
    return conn


def _indexes(url: str) -> list[tuple[str, bool]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname LIKE 'memory\\_vectors%%\\_hnsw\\_l%%' ORDER BY 1"
        ).fetchall()
    return [(name, bool(valid)) for name, valid in rows]


async def _lane(store: PostgresStore, namespace: str = "default") -> int:
    return await store.read(lane_of, "alice", namespace)


async def test_a_big_lane_gets_an_index_its_searches_use_and_small_lanes_stay_exact(
    small_threshold: PostgresStore, pg_url: str
) -> None:
    rng = np.random.default_rng(5)
    queries = unit_vectors(rng, 12)
    vectors = np.concatenate([unit_vectors(rng, 240), _near(rng, queries, 5, 0.1)])
    pks = await small_threshold.write(_fill, vectors)
    await small_threshold.write(_fill, unit_vectors(rng, 40), "small")
    big, small = await _lane(small_threshold), await _lane(small_threshold, "small")
    assert _indexes(pg_url) == []  # no pass ran yet: searched exactly
    assert not (await small_threshold.read(lambda r: r.vector_search(big))).indexed  # type: ignore[attr-defined]

    done = await small_threshold.maintain_indexes()
    assert [lane for lane, _ in done.built] == [big] and not done.busy
    assert _indexes(pg_url) == [(lane_indexes.index_name("memory_vectors", big), True)]
    search = await small_threshold.read(lambda r: r.vector_search(big))
    assert isinstance(search, LaneSearch) and search.indexed
    assert not (await small_threshold.read(lambda r: r.vector_search(small))).indexed  # type: ignore[attr-defined]

    with _connect(pg_url) as conn, conn.transaction():  # the statement the search sends, as the planner sees it
        conn.execute("SET LOCAL hnsw.ef_search = 400")
        conn.execute("SET LOCAL enable_sort = off")
        plan = "\n".join(
            row[0]
            for row in conn.execute(
                "EXPLAIN " + lane_indexes.knn_sql("memory_vectors", big),
                {"q": queries[0], "upto": max(pks), "k": 10},
                prepare=False,
            )
        )
    assert f"Index Scan using {lane_indexes.index_name('memory_vectors', big)}" in plan

    overlaps = []
    for query, found in zip(queries, search(queries, 10)):
        assert len(found) == 10
        assert [m.cosine for m in found] == sorted((m.cosine for m in found), reverse=True)
        overlaps.append(len({m.pk for m in found} & set(_exact(pks, vectors, query, 10))) / 10)
    assert sum(overlaps) / len(overlaps) >= OVERLAP_AT_10
    # min_score keeps only what reaches it, from the same k nearest.
    unbounded = search(queries[:1], 10)[0]
    scored = search(queries[:1], 10, 0.3)[0]
    assert scored and scored == [m for m in unbounded if m.cosine >= 0.3] != unbounded

    problems, _ = await small_threshold.read(lambda r: r.check())
    lines = [p for p in problems if p.code.startswith("lane_index")]
    assert [(p.code, p.ref) for p in lines] == [("lane_index", str(big))]
    assert "300 live memories" in lines[0].detail and "ready" in lines[0].detail
    assert (await small_threshold.maintain_indexes()).built == []  # nothing more to do


async def test_a_search_returns_k_rows_when_the_graph_yields_fewer(small_threshold: PostgresStore, pg_url: str) -> None:
    rng = np.random.default_rng(8)
    query = unit_vectors(rng, 1)[0]
    vectors = unit_vectors(rng, 300)
    pks = await small_threshold.write(_fill, vectors)
    await small_threshold.maintain_indexes()
    lane = await _lane(small_threshold)
    search = await small_threshold.read(lambda r: r.vector_search(lane))
    assert search.indexed  # type: ignore[attr-defined]
    # 500 rows nearer the query than any before, written after the search was obtained: the
    # graph's 400 candidates are all theirs, and the search must not return any of them.
    await small_threshold.write(_fill, _near(rng, query[None, :], 500, 0.05), "default", 300)
    with _connect(pg_url) as conn, conn.transaction():
        conn.execute("SET LOCAL hnsw.ef_search = 400")
        conn.execute("SET LOCAL enable_sort = off")
        graph = conn.execute(
            lane_indexes.knn_sql("memory_vectors", lane), {"q": query, "upto": max(pks), "k": 10}, prepare=False
        ).fetchall()
    assert len(graph) < 10  # the graph alone would come up short
    found = search(query[None, :], 10)[0]
    assert [m.pk for m in found] == _exact(pks, vectors, query, 10)
    everything = search(query[None, :], 400)[0]  # more than remain unfiltered in the graph's candidates
    assert [m.pk for m in everything] == _exact(pks, vectors, query, 300)


async def test_a_lane_below_a_quarter_of_the_threshold_loses_its_index(
    small_threshold: PostgresStore, pg_url: str
) -> None:
    rng = np.random.default_rng(9)

    def fill_and_keep_ids(w: StoreWriter) -> list[str]:
        prepare_vectors(w)
        return [
            remember(w, "alice", "default", f"fact {i}", vector=v, at=T0 + i).id
            for i, v in enumerate(unit_vectors(rng, 210))
        ]

    ids = await small_threshold.write(fill_and_keep_ids)
    assert len((await small_threshold.maintain_indexes()).built) == 1

    async def forget(count: int) -> None:
        for memory_id in ids[:count]:
            await small_threshold.write(lambda w, m=memory_id: w.forget_memory("alice", m))  # type: ignore[misc]
        del ids[:count]

    await forget(160)  # 50 left: a quarter of 200, still kept
    assert (await small_threshold.maintain_indexes()).dropped == []
    assert len(_indexes(pg_url)) == 1
    await forget(1)  # 49
    lane = await _lane(small_threshold)
    assert (await small_threshold.maintain_indexes()).dropped == [lane]
    assert _indexes(pg_url) == []
    assert not (await small_threshold.read(lambda r: r.vector_search(lane))).indexed  # type: ignore[attr-defined]
    problems, _ = await small_threshold.read(lambda r: r.check())
    assert not [p for p in problems if p.code.startswith("lane_index")]


async def test_two_stores_racing_to_build_build_once(pg_url: str) -> None:
    stores = [PostgresStore(pg_url, hnsw_min_rows=MIN_ROWS, maintain_every_s=None) for _ in range(2)]
    for store in stores:
        await store.open()
    try:
        rng = np.random.default_rng(10)
        await stores[0].write(_fill, unit_vectors(rng, 400))
        passes = await asyncio.gather(*(store.maintain_indexes() for store in stores))
        assert sum(len(p.built) for p in passes) == 1
        assert len(_indexes(pg_url)) == 1 and _indexes(pg_url)[0][1]
        again = await asyncio.gather(*(store.maintain_indexes() for store in stores))
        assert sum(len(p.built) for p in again) == 0
    finally:
        for store in stores:
            await store.close()


async def test_an_interrupted_build_is_reported_and_rebuilt(small_threshold: PostgresStore, pg_url: str) -> None:
    rng = np.random.default_rng(12)
    await small_threshold.write(_fill, unit_vectors(rng, 250))
    lane = await _lane(small_threshold)
    name = lane_indexes.index_name("memory_vectors", lane)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # what a build killed half-way leaves
        conn.execute(
            f"CREATE INDEX {name} ON memory_vectors USING hnsw (embedding vector_cosine_ops) WHERE lane_id = {lane}"
        )
        conn.execute(f"UPDATE pg_index SET indisvalid = false WHERE indexrelid = '{name}'::regclass")
    assert not (await small_threshold.read(lambda r: r.vector_search(lane))).indexed  # type: ignore[attr-defined]
    problems, _ = await small_threshold.read(lambda r: r.check())
    assert [(p.severity, p.code) for p in problems if p.code.startswith("lane_index")] == [
        ("warning", "lane_index_invalid")
    ]
    done = await small_threshold.maintain_indexes()
    assert done.cleared == [name] and [lane for lane, _ in done.built] == [lane]
    assert _indexes(pg_url) == [(name, True)]


async def test_writes_start_the_build_in_the_background(pg_url: str) -> None:
    store = PostgresStore(pg_url, hnsw_min_rows=MIN_ROWS)
    await store.open()
    try:
        rng = np.random.default_rng(13)
        await store.write(_fill, unit_vectors(rng, 220))  # the write's pass sees a big lane
        lane = await _lane(store)
        for _ in range(600):  # a deadline, not a measured time
            if (await store.read(lambda r: r.vector_search(lane))).indexed:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.1)
        assert (await store.read(lambda r: r.vector_search(lane))).indexed  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_a_reindex_builds_the_big_lanes_indexes_before_it_switches(
    small_threshold: PostgresStore, pg_url: str
) -> None:
    rng = np.random.default_rng(14)
    pks = await small_threshold.write(_fill, unit_vectors(rng, 220))
    await small_threshold.maintain_indexes()
    lane = await _lane(small_threshold)
    state = await small_threshold.write(lambda w: w.reindex_begin("smaller-model", DIM // 2))
    fresh = unit_vectors(rng, len(pks), DIM // 2)
    batch = await small_threshold.read(lambda r: r.reindex_batch(0, 1000))
    await small_threshold.write(
        lambda w: w.reindex_write(state, [(pk, lane_id, fresh[i]) for i, (pk, lane_id, _) in enumerate(batch)])
    )
    await small_threshold.write(lambda w: w.reindex_finish(state))
    assert _indexes(pg_url) == [(lane_indexes.index_name(state.vector_table, lane), True)]
    search = await small_threshold.read(lambda r: r.vector_search(lane))
    assert search.indexed  # type: ignore[attr-defined]
    ((best, *_),) = search(fresh[:1], 5)
    assert best.pk == pks[0]


async def test_doctor_names_the_server_pgvector_and_each_big_lanes_index(
    small_threshold: PostgresStore, pg_url: str
) -> None:
    rng = np.random.default_rng(15)
    await small_threshold.write(_fill, unit_vectors(rng, 210))
    await small_threshold.write(_fill, unit_vectors(rng, 205), "second")
    lanes = [await _lane(small_threshold), await _lane(small_threshold, "second")]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # one lane indexed, the other not yet
        conn.execute(
            f"CREATE INDEX {lane_indexes.index_name('memory_vectors', lanes[0])} ON memory_vectors"
            f" USING hnsw (embedding vector_cosine_ops) WHERE lane_id = {lanes[0]}"
        )
    settings = load_settings(db_url=pg_url, storage={"hnsw_min_rows": MIN_ROWS}, embedding={"model": "none"})
    report = await doctor.run_doctor(settings)
    checks = {check.name: check for check in report.checks}
    assert not report.failed, report.checks
    assert "sqlite" not in checks and "fts5" not in checks and "database" not in checks
    assert checks["postgresql"].status == "ok" and checks["postgresql"].detail.startswith("PostgreSQL 16.")
    assert checks["pgvector"].status == "ok" and checks["pgvector"].data["version"] == "0.6.2"
    indexes = checks["lane indexes"]
    assert indexes.status == "ok" and indexes.detail.startswith("2 big lanes")
    assert [(lane["lane"], lane["state"]) for lane in indexes.data["lanes"]] == [
        (str(lanes[0]), "lane_index"),
        (str(lanes[1]), "lane_index_pending"),
    ]
