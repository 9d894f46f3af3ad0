"""Nearest memories: the true top k of a lane by cosine, with min_score, over the lane as it
was when the search was obtained. Vectors are random unit vectors: finding the nearest of
what was stored is the store's job, not the model's."""

from __future__ import annotations

import numpy as np
import pytest

from memwal_mcp.errors import EmbeddingError
from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreWriter, VectorMatch

from .helpers import DIM, MODEL, T0, Stored, create_memories, lane_of, prepare_vectors, remember, unit_vectors


def _fill(w: StoreWriter, vectors: np.ndarray, namespace: str = "default", owner: str = "alice") -> list[int]:
    prepare_vectors(w)
    return [
        remember(w, owner, namespace, f"memory {namespace} {i}", vector=vector, at=T0 + i).pk
        for i, vector in enumerate(vectors)
    ]


def _brute_force(
    pks: list[int], vectors: np.ndarray, query: np.ndarray, k: int, min_score: float | None = None
) -> tuple[list[int], list[float]]:
    """The top k by cosine over every vector, by NumPy: what the store must answer."""
    scores = vectors @ query
    order = np.argsort(-scores, kind="stable")
    if min_score is not None:
        order = order[scores[order] >= min_score]
    return [pks[i] for i in order[:k]], [float(scores[i]) for i in order[:k]]


def _assert_same(found: list[VectorMatch], pks: list[int], cosines: list[float]) -> None:
    assert [m.pk for m in found] == pks
    assert [m.cosine for m in found] == pytest.approx(cosines, abs=1e-5)


def _near(rng: np.random.Generator, queries: np.ndarray, per_query: int, spread: float) -> np.ndarray:
    """Unit vectors scattered around each query, so a threshold has something to keep."""
    noisy = np.repeat(queries, per_query, axis=0) + spread * rng.standard_normal((len(queries) * per_query, DIM))
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


async def test_the_nearest_are_the_true_top_k(store: Store) -> None:
    rng = np.random.default_rng(11)
    queries = unit_vectors(rng, 8)
    vectors = np.concatenate([unit_vectors(rng, 240), _near(rng, queries, 6, 0.08)])
    pks = await store.write(_fill, vectors)
    await store.write(_fill, unit_vectors(rng, 60), "elsewhere")  # another lane's vectors are no candidates
    lane = await store.read(lane_of, "alice", "default")
    search = await store.read(lambda r: r.vector_search(lane))
    batch = search(queries, 10)
    assert len(batch) == len(queries)
    for query, found in zip(queries, batch):
        _assert_same(found, *_brute_force(pks, vectors, query, 10))
        _assert_same(search(query[None, :], 10)[0], *_brute_force(pks, vectors, query, 10))
    everything = search(queries[:1], len(pks) + 50)[0]
    _assert_same(everything, *_brute_force(pks, vectors, queries[0], len(pks)))


async def test_min_score_keeps_only_the_close_enough(store: Store) -> None:
    rng = np.random.default_rng(12)
    queries = unit_vectors(rng, 6)
    # Around each query, cosines spread from about 0.5 to 0.95: the threshold cuts through them.
    vectors = np.concatenate([unit_vectors(rng, 200), *(_near(rng, queries, 4, s) for s in (0.02, 0.04, 0.06, 0.09))])
    pks = await store.write(_fill, vectors)
    lane = await store.read(lane_of, "alice", "default")
    search = await store.read(lambda r: r.vector_search(lane))
    for min_score, k in ((0.75, 50), (0.75, 3), (0.999, 5), (-1.0, 7)):
        for query, found in zip(queries, search(queries, k, min_score)):
            expected = _brute_force(pks, vectors, query, k, min_score)
            _assert_same(found, *expected)
            assert all(m.cosine >= min_score for m in found)
        single = search(queries[:1], k, min_score)[0]
        _assert_same(single, *_brute_force(pks, vectors, queries[0], k, min_score))
    kept = [len(found) for found in search(queries, 50, 0.75)]
    assert 0 < min(kept) and max(kept) < 16  # the threshold did cut through each query's neighbours


async def test_a_new_search_sees_a_memory_created_after_an_earlier_one(store: Store) -> None:
    rng = np.random.default_rng(13)
    vectors = unit_vectors(rng, 20)
    await store.write(_fill, vectors)
    lane = await store.read(lane_of, "alice", "default")
    earlier = await store.read(lambda r: r.vector_search(lane))
    (fresh_vector,) = unit_vectors(rng, 1)
    fresh = await store.write(lambda w: remember(w, "alice", "default", "a later fact", vector=fresh_vector))
    assert fresh.pk not in {m.pk for m in earlier(fresh_vector[None, :], 30)[0]}
    later = await store.read(lambda r: r.vector_search(lane))
    assert later(fresh_vector[None, :], 1)[0][0].pk == fresh.pk


async def test_an_earlier_search_still_finds_what_was_live_when_it_was_taken(store: Store) -> None:
    """Whatever is written after it (and whatever newer search is taken), an earlier search
    still finds every memory that was live when it was obtained and still is."""
    rng = np.random.default_rng(14)
    vectors = unit_vectors(rng, 20)
    pks = await store.write(_fill, vectors)
    lane = await store.read(lane_of, "alice", "default")
    earlier = await store.read(lambda r: r.vector_search(lane))
    (fresh_vector,) = unit_vectors(rng, 1)
    await store.write(lambda w: remember(w, "alice", "default", "a later fact", vector=fresh_vector))
    await store.read(lambda r: r.vector_search(lane))
    for pk, vector in zip(pks, vectors):
        (best, *_) = earlier(vector[None, :], 1)[0]
        assert best.pk == pk and best.cosine == pytest.approx(1.0, abs=1e-5)


async def test_a_memory_without_a_vector_waits_for_one(store: Store) -> None:
    (vector,) = unit_vectors(np.random.default_rng(15), 1)

    def build(w: StoreWriter) -> Stored:
        prepare_vectors(w)
        return remember(w, "alice", "default", "made while the model was away")

    memory = await store.write(build)
    assert (memory.pk, memory.lane, "made while the model was away") in await store.read(lambda r: r.unembedded(100))
    assert [row.pk for row in await store.read(lambda r: r.unembedded_in_lane(memory.lane, 10))] == [memory.pk]
    search = await store.read(lambda r: r.vector_search(memory.lane))
    assert search(vector[None, :], 5) == [[]]
    stale = [(memory.pk, memory.lane, "a body it no longer has", vector)]
    assert await store.write(lambda w: w.set_vectors(stale, MODEL)) == 0
    items = [(memory.pk, memory.lane, "made while the model was away", vector)]
    assert await store.write(lambda w: w.set_vectors(items, MODEL)) == 1
    ((match,),) = (await store.read(lambda r: r.vector_search(memory.lane)))(vector[None, :], 5)
    assert match.pk == memory.pk and match.cosine == pytest.approx(1.0, abs=1e-5)
    assert memory.pk not in {pk for pk, _, _ in await store.read(lambda r: r.unembedded(100))}


async def test_a_changed_or_retired_memory_moves_in_the_search(store: Store) -> None:
    rng = np.random.default_rng(16)
    old_vector, new_vector, other_vector = unit_vectors(rng, 3)

    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        prepare_vectors(w)
        return (
            remember(w, "alice", "default", "the old body", vector=old_vector),
            remember(w, "alice", "default", "another fact", vector=other_vector, at=T0 + 1),
        )

    changed, retired = await store.write(build)

    def change(w: StoreWriter) -> None:
        with w.transaction():
            w.replace_body(
                pk=changed.pk,
                lane=changed.lane,
                body="the new body",
                key=norm_key("the new body"),
                vector=new_vector,
                model_id=MODEL,
                decision="consolidated",
                job_id=None,
                llm_model=None,
                guard=None,
                merged_ids=[retired.id],
                now=T0 + 2,
            )
            w.retire(retired.pk, changed.id, T0 + 2)

    await store.write(change)
    search = await store.read(lambda r: r.vector_search(changed.lane))
    by_old, by_new, by_other = search(np.stack([old_vector, new_vector, other_vector]), 5)
    assert [m.pk for m in by_new] == [changed.pk] and by_new[0].cosine == pytest.approx(1.0, abs=1e-5)
    assert by_old[0].cosine == pytest.approx(float(old_vector @ new_vector), abs=1e-5)
    assert retired.pk not in {m.pk for m in by_other}


async def test_cosines_and_vectors_of_named_memories(store: Store) -> None:
    rng = np.random.default_rng(17)
    vectors = unit_vectors(rng, 12)
    pks = await store.write(_fill, vectors)
    lane = await store.read(lane_of, "alice", "default")
    (query,) = unit_vectors(rng, 1)
    wanted = pks[::3]
    cosines = await store.read(lambda r: r.cosines(lane, query, wanted))
    assert set(cosines) == set(wanted)
    for pk in wanted:
        assert cosines[pk] == pytest.approx(float(vectors[pks.index(pk)] @ query), abs=1e-5)
    stored = await store.read(lambda r: r.vectors_of(lane, wanted))
    assert set(stored) == set(wanted)
    for pk in wanted:
        np.testing.assert_allclose(stored[pk], vectors[pks.index(pk)], atol=1e-6)


async def test_before_the_first_vector_there_is_nothing_to_find(store: Store) -> None:
    memory = await store.write(remember, "alice", "default", "no model yet")
    assert await store.read(lambda r: r.vector_model()) is None
    query = unit_vectors(np.random.default_rng(18), 2)
    assert (await store.read(lambda r: r.vector_search(memory.lane)))(query, 5) == [[], []]
    assert await store.read(lambda r: r.cosines(memory.lane, query[0], [memory.pk])) == {}


async def test_the_vector_table_is_bound_to_one_dimension(store: Store) -> None:
    await store.write(prepare_vectors)
    assert await store.read(lambda r: r.vector_model()) == (MODEL, DIM)
    assert await store.write(lambda w: w.ensure_vector_table(MODEL, DIM)) is None
    # Another model of the same size: comparable in shape, not in meaning; the caller warns.
    assert await store.write(lambda w: w.ensure_vector_table("another-model", DIM)) == MODEL
    with pytest.raises(EmbeddingError):
        await store.write(lambda w: w.ensure_vector_table("a-bigger-model", DIM * 2))
    assert await store.read(lambda r: r.vector_model()) == (MODEL, DIM)


@pytest.mark.slow
async def test_the_nearest_are_exact_in_a_large_lane(store: Store, large_lane: int) -> None:
    """A lane big enough that a backend may search it another way (an index, a projection)
    must still answer the true top k, with and without min_score."""
    rng = np.random.default_rng(19)
    queries = unit_vectors(rng, 4)
    vectors = np.concatenate([unit_vectors(rng, large_lane), *(_near(rng, queries, 5, s) for s in (0.03, 0.06, 0.09))])

    def seed(w: StoreWriter) -> tuple[str, int]:
        prepare_vectors(w)
        job, _ = w.insert_job("alice", "big", "the job the memories cite", None, T0)
        return job.id, w.owner_lanes("alice")[0].id

    job_id, lane = await store.write(seed)

    def fill(w: StoreWriter, start: int, stop: int) -> list[int]:
        bodies = [f"memory {i}" for i in range(start, stop)]
        return create_memories(w, "alice", "big", lane, job_id, bodies, vectors[start:stop])

    pks: list[int] = []
    for start in range(0, len(vectors), 5000):
        pks += await store.write(fill, start, min(start + 5000, len(vectors)))
    search = await store.read(lambda r: r.vector_search(lane))
    for query, found in zip(queries, search(queries, 10)):
        _assert_same(found, *_brute_force(pks, vectors, query, 10))
    for query, found in zip(queries, search(queries, 10, 0.8)):
        _assert_same(found, *_brute_force(pks, vectors, query, 10, 0.8))
