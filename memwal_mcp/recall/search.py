"""Find the best distinct facts for a query in one or more lanes, back-filling after collapse.

Candidates come from vector kNN and FTS5 BM25 (both per lane, live memories only).
Each candidate gets both signals -- its cosine with the query (from its stored
vector) and its BM25 strength -- and one score in [0, 1]:

    dense    score = cosine (clipped to [0, 1])
    lexical  score = s / (s + c) * min(1, len / avg_len)
             s = -bm25, c = `lexical_saturation`; len = the text's length,
             avg_len = the mean length of the owner's memories
    hybrid   score = w * dense + (1 - w) * lexical, w = `dense_weight`

The length factor discounts word matches in texts shorter than is usual in the
lane: BM25 rewards a short text that shares one rare word with the query far more
than a longer text that says the same and more ("How was the wedding?" against
the turn that tells what happened at it). On the development set it lifts hybrid
above both dense and lexical at k = 5 and 10 (benchmarks/README.md).

The same text always gets the same score for a query, and `min_score` filters on it.
After collapsing duplicates the search widens (k x4) until `limit` distinct facts
are found or every source is exhausted.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import anyio
import numpy as np

from ..concurrently import side_by_side
from ..embedding import Embedder
from ..errors import EmbeddingError
from ..records import Hit
from ..store import Database, fts, memories
from ..store.jobs import QueuedJob
from .collapse import collapse_duplicates
from .lexical import bm25_to_score, coverage, fts_query
from .unindexed_vectors import UnindexedVectors

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "dense", "lexical"]
# sqlite-vec's largest k for one KNN query.
MAX_K = 4096
# Most facts a recall scores outside the indexes (queued jobs are capped by the caller).
MAX_UNINDEXED = 256


@dataclass(frozen=True, slots=True)
class SearchParams:
    owner: str
    query: str
    limit: int
    min_score: float | None = None
    since: float | None = None
    until: float | None = None
    prefer_recent: bool = False
    mode: Mode = "hybrid"
    dense_weight: float = 0.7
    lexical_saturation: float = 2.0
    recency_half_life_days: float = 30.0
    average_length: float = 0.0  # of the lanes' memories, for the lexical length factor


@dataclass(frozen=True, slots=True)
class _Candidate:
    row: memories.MemoryRow
    cosine: float | None
    bm25: float | None


def check_dimension(conn: sqlite3.Connection, embedder: Embedder) -> bool:
    """True when vectors exist to search; refuse a model of another dimension."""
    stored = memories.vector_model(conn)
    if stored is None:
        return False
    model_id, dim = stored
    if dim != embedder.dim:
        raise EmbeddingError(
            f"this database's vectors were built with {model_id!r} ({dim} dimensions) and cannot be "
            f"searched with {embedder.model_id!r} ({embedder.dim} dimensions). Configure the original "
            "model (MEMWAL_EMBEDDING__MODEL) or use another database (MEMWAL_DB_PATH)."
        )
    return True


def _lexical(conn: sqlite3.Connection, lanes: Sequence[int], match: str | None, k: int) -> tuple[dict[int, float], bool]:
    """Up to k BM25 matches in the lanes: (rowid -> bm25, True when there were no more)."""
    if match is None:
        return {}, True
    found, exhausted = fts.search(conn, lanes, match, k)
    return dict(found), exhausted


def _words_first(
    conn: sqlite3.Connection, lanes: Sequence[int], match: str | None, k: int, unindexed: bool
) -> tuple[tuple[dict[int, float], bool], dict[int, memories.MemoryRow], list[memories.MemoryRow]]:
    """What the reader can do before the query vector exists: the word search, the rows of
    its hits, and (when vectors are searched) the memories still waiting for a vector."""
    ranks, exhausted = _lexical(conn, lanes, match, k)
    waiting = [row for lane in lanes for row in memories.unembedded_in_lane(conn, lane, MAX_UNINDEXED)] if unindexed else []
    return (ranks, exhausted), memories.memories_by_rowid(conn, list(ranks)), waiting


def _prepare(
    conn: sqlite3.Connection, owner: str, lanes: Sequence[int], embedder: Embedder | None, mean_length: bool
) -> tuple[float, list[Callable[[np.ndarray, int], list[tuple[int, float]]]] | None]:
    """One reader round trip before the search proper: the owner's mean memory length (when
    the word score needs it) and, once vectors exist, one kNN function per lane."""
    average = memories.average_length(conn, owner) if mean_length else 0.0
    indexed = embedder is not None and check_dimension(conn, embedder)
    return average, memories.lane_vectors(conn, lanes) if indexed else None


def _candidates(
    conn: sqlite3.Connection,
    lanes: Sequence[int],
    query_vector: np.ndarray | None,
    ranks: dict[int, float],
    nearest: tuple[dict[int, float], bool] | None,
    known: dict[int, memories.MemoryRow] | None = None,
) -> list[_Candidate]:
    """The kNN hits (`nearest`) joined with the word matches, each with both signals."""
    cosines = dict(nearest[0]) if nearest is not None else {}
    known = known or {}
    rows = {**known, **memories.memories_by_rowid(conn, list((cosines.keys() | ranks.keys()) - known.keys()))}
    # Only the lanes asked for, whatever an index returned (fts.search trusts lanes.live_count).
    wanted = set(lanes)
    rows = {rowid: row for rowid, row in rows.items() if row.lane in wanted}
    if query_vector is not None:  # word matches that kNN did not reach: their cosine too
        missing: dict[int, list[int]] = {}
        for rowid in ranks:
            if rowid not in cosines and rowid in rows:
                missing.setdefault(rows[rowid].lane, []).append(rowid)
        for lane, rowids in missing.items():
            cosines.update(memories.cosines(conn, lane, query_vector, rowids))
    return [_Candidate(row, cosines.get(rowid), ranks.get(rowid)) for rowid, row in rows.items()]


def _nearest(searches: Sequence[Callable[[np.ndarray, int], list[tuple[int, float]]]], query_vector: np.ndarray,
             k: int) -> tuple[dict[int, float], bool]:
    cosines: dict[int, float] = {}
    exhausted = True
    for search_lane in searches:
        found = search_lane(query_vector, k)
        cosines.update(found)
        exhausted &= len(found) < k
    return cosines, exhausted


class _Scorer:
    def __init__(self, params: SearchParams, dense: bool, lexical: bool, now: float) -> None:
        self.p = params
        self.dense = dense
        self.lexical = lexical
        self.now = now

    def lexical_score(self, bm25: float | None, length: int) -> float:
        if bm25 is None:
            return 0.0
        factor = min(1.0, length / self.p.average_length) if self.p.average_length > 0 else 1.0
        return bm25_to_score(bm25, self.p.lexical_saturation) * factor

    def __call__(self, cosine: float | None, lexical: float) -> float:
        dense = min(1.0, max(0.0, cosine or 0.0))
        if self.dense and self.lexical:
            score = self.p.dense_weight * dense + (1 - self.p.dense_weight) * lexical
        else:
            score = dense if self.dense else lexical
        return score

    def recency(self, hit: Hit) -> Hit:
        if not self.p.prefer_recent:
            return hit
        age_days = max(0.0, self.now - hit.when) / 86400
        decay = math.pow(0.5, age_days / self.p.recency_half_life_days)
        return replace(hit, score=hit.score * (0.5 + 0.5 * decay))

    def in_window(self, when: float) -> bool:
        return (self.p.since is None or when >= self.p.since) and (self.p.until is None or when <= self.p.until)


def _rank(hit: Hit) -> tuple[float, float, str]:
    """Best score first; among equal scores (common for word matches: BM25 ties on texts of
    one length) the newer fact, then the id -- never the order an index happened to return."""
    return (-hit.score, -hit.when, hit.id)


def _hit(row: memories.MemoryRow, score: float) -> Hit:
    return Hit(
        row.id, row.body, score, row.namespace, row.created_at, row.updated_at,
        occurred_at=row.occurred_at, key=row.norm_key,
    )


async def search(
    db: Database,
    embedder: Embedder | None,
    lanes: Sequence[int],
    params: SearchParams,
    pending: Sequence[QueuedJob] = (),
    unindexed: UnindexedVectors | None = None,
) -> list[Hit]:
    """`unindexed`: where the vectors of facts outside the indexes are kept between recalls."""
    dense = params.mode in ("hybrid", "dense") and embedder is not None
    # Without a query vector, lexical is all there is, whatever the mode.
    match = fts_query(params.query) if params.mode != "dense" or not dense else None
    wants_length = match is not None and params.average_length == 0.0
    average, searches = await db.read(_prepare, params.owner, lanes, embedder if dense else None, wants_length)
    if wants_length:
        params = replace(params, average_length=average)
    # A generous first pool: a fact ranked low by one signal can still win on both.
    k = min(MAX_K, max(params.limit * 4, 100))

    # The word search needs no query vector: it runs on the reader while another thread
    # embeds the query and scans the lanes' vectors (searches is None before any vector).
    def embed_and_scan() -> tuple[np.ndarray | None, tuple[dict[int, float], bool] | None]:
        assert embedder is not None  # only called when dense
        vector = embedder.embed_query(params.query)
        return vector, _nearest(searches, vector, k) if searches is not None else None

    async def dense_side() -> tuple[np.ndarray | None, tuple[dict[int, float], bool] | None]:
        return await anyio.to_thread.run_sync(embed_and_scan) if dense else (None, None)

    lexical: tuple[dict[int, float], bool] | None
    known: dict[int, memories.MemoryRow] | None
    (lexical, known, waiting), (query_vector, nearest) = await side_by_side(
        lambda: db.read(_words_first, lanes, match, k, dense), dense_side
    )
    scorer = _Scorer(params, dense=query_vector is not None, lexical=match is not None, now=time.time())

    extra, occurrences = await _unindexed(
        embedder, params.query, query_vector, scorer, pending, waiting, unindexed or UnindexedVectors()
    )
    floor = params.min_score if params.min_score is not None else -math.inf

    while True:
        ranks, words_exhausted = lexical if lexical is not None else await db.read(_lexical, lanes, match, k)
        if nearest is None and searches is not None and query_vector is not None:  # a wider pool
            nearest = await anyio.to_thread.run_sync(_nearest, searches, query_vector, k)
        found = await db.read(
            _candidates, lanes, query_vector if searches is not None else None, ranks, nearest, known
        )
        exhausted = words_exhausted and (nearest is None or nearest[1])
        lexical = nearest = known = None  # a wider pool searches again
        hits = [
            scorer.recency(_hit(c.row, scorer(c.cosine, scorer.lexical_score(c.bm25, len(c.row.body)))))
            for c in found
            if scorer.in_window(c.row.occurred_at or c.row.created_at)
        ]
        occurrences.update({c.row.id: c.row.occurrences for c in found})
        ranked = sorted([*hits, *extra], key=_rank)
        distinct = collapse_duplicates([h for h in ranked if h.score >= floor], occurrences)
        if len(distinct) >= params.limit or exhausted or k >= MAX_K:
            return distinct[: params.limit]
        k = min(MAX_K, k * 4)


async def _unindexed(
    embedder: Embedder | None,
    query: str,
    query_vector: np.ndarray | None,
    scorer: _Scorer,
    pending: Sequence[QueuedJob],
    waiting: Sequence[memories.MemoryRow],
    cache: UnindexedVectors,
) -> tuple[list[Hit], dict[str, int]]:
    """Facts the indexes cannot see yet, scored here: queued jobs (read-your-writes) and
    memories still waiting for a vector (`waiting`: stored while the model was unavailable)."""
    items = [
        Hit(job.id, job.text, 0.0, job.namespace, job.created_at, job.created_at, pending=True,
            occurred_at=job.occurred_at)
        for job in pending
    ]
    occurrences: dict[str, int] = {}
    if query_vector is not None:
        for row in waiting:
            items.append(_hit(row, 0.0))
            occurrences[row.id] = row.occurrences
    items = [hit for hit in items if scorer.in_window(hit.when)]
    if not items:
        return [], occurrences
    cosines: list[float | None] = [None] * len(items)
    if embedder is not None and query_vector is not None:
        try:
            matrix = await anyio.to_thread.run_sync(cache.embed, embedder, [hit.text for hit in items])
            cosines = [float(s) for s in matrix @ query_vector]
        except Exception:  # a recall must not fail because curation's input is odd: match words
            log.exception("embedding %d unindexed facts for recall failed; matching their words", len(items))
            scorer = _Scorer(scorer.p, dense=False, lexical=True, now=scorer.now)
    scored = [
        scorer.recency(replace(hit, score=scorer(cosine, coverage(query, hit.text) if scorer.lexical else 0.0)))
        for hit, cosine in zip(items, cosines)
    ]
    # With a query vector every fact is a candidate, as in kNN; without one, only facts sharing a word.
    return [hit for hit in scored if hit.score > 0 or scorer.dense], occurrences
