"""A recall whose lane is searched approximately still finds the true nearest memory when its
word matches show the approximate answer missed (recall/search.py, _doubted).

The lane is built so that an approximate search must miss: every memory but two lies in a
64-dimensional subspace S, the query leans into S (so S's memories outscore the rest there) but
lies mostly outside it, and the two memories nearest the query lie wholly outside S. Projected
on S -- SQLite's heads are a big lane's first 64 principal coordinates -- those two score 0
while thousands of others score about 0.39, so the heads' candidates never include them; their
true cosines are 0.9 and 0.85 against at most 0.44 for the rest. One of the two holds the
query's word, so the word search finds it and computes its cosine; the other holds no query
word and only an exact scan finds it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memwal_mcp.recall.search import SearchParams, search
from memwal_mcp.store import Store, StoreWriter

from .helpers import DIM, MODEL, T0, create_memories, prepare_vectors

pytestmark = pytest.mark.slow

WORDED = "The zebra crossing by the mill was repainted"
WORDLESS = "Fresh white stripes went down outside the old granary"


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


class _QueryVector:
    """The query's side of an embedder: this test needs the query at a chosen place beside the
    stored vectors, which it writes itself; what is tested is the store's search and recall."""

    model_id, dim = MODEL, DIM

    def __init__(self, vector: np.ndarray) -> None:
        self._vector = vector

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("nothing is embedded here")


def _geometry(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query, the worded memory's vector, the wordless one's, n vectors in S)."""
    rng = np.random.default_rng(23)
    basis, _ = np.linalg.qr(rng.standard_normal((DIM, 66)))
    u, w, inside = basis[:, 0], basis[:, 1], basis[:, 2:]  # S = span(w, inside[:, :63])
    s = w  # the query's part in S
    query = _unit(0.9 * u + np.sqrt(1 - 0.81) * s)
    wordless = _unit(u)  # cosine 0.9 with the query, 0 on S
    worded = _unit(u + 0.25 * inside[:, 63])  # outside S too (inside[:, 63] is not in S): cosine about 0.87
    spread = rng.standard_normal((n, 63)) @ inside[:, :63].T
    others = _unit(s + 0.5 * _unit(spread))
    return query, worded, wordless, others


async def test_an_approximate_miss_shown_by_a_word_match_is_searched_again_exactly(
    store: Store, large_lane: int
) -> None:
    query, worded, wordless, others = _geometry(large_lane)

    def fill(w: StoreWriter, bodies: list[str], vectors: np.ndarray) -> int:
        prepare_vectors(w)
        job, _ = w.insert_job("alice", "default", "the job the memories cite", None, T0)
        lane = w.owner_lanes("alice")[0].id
        create_memories(w, "alice", "default", lane, job.id, bodies, vectors)
        return lane

    vectors = np.concatenate([others, worded[None], wordless[None]])
    bodies = [f"note {i} about the weather" for i in range(len(others))] + [WORDED, WORDLESS]
    lane = await store.write(fill, bodies, vectors)
    cosines = vectors @ query
    assert cosines[-1] > cosines[-2] > 0.8 > 0.5 > cosines[:-2].max()

    hits = await search(store, _QueryVector(query), [lane], SearchParams("alice", "zebra", 3, mode="hybrid"))
    assert [hit.text for hit in hits[:2]] == [WORDED, WORDLESS]
