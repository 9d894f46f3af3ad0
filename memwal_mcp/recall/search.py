"""Find the best distinct facts in a lane for a query, back-filling after collapse.

Vector kNN when an embedder is available (cosine similarity is the score), FTS5
BM25 otherwise. After collapsing duplicates the search widens (k x4) until
`limit` distinct facts are found or the lane has nothing more to give.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import replace

import anyio
import numpy as np

from ..embedding import Embedder
from ..errors import EmbeddingError
from ..records import Hit
from ..store import Database
from ..store import memories
from ..store.jobs import QueuedJob
from .collapse import collapse_duplicates
from .lexical import bm25_to_score, fts_query, query_tokens

log = logging.getLogger(__name__)

# sqlite-vec's largest k for one KNN query.
MAX_K = 4096
# Most facts a recall scores outside the indexes (queued jobs are capped by the caller).
MAX_UNINDEXED = 256


def _hits(conn: sqlite3.Connection, scored: Sequence[tuple[int, float]]) -> tuple[list[Hit], dict[str, int]]:
    rows = memories.memories_by_rowid(conn, [rowid for rowid, _ in scored])
    hits: list[Hit] = []
    occurrences: dict[str, int] = {}
    for rowid, score in scored:
        row = rows.get(rowid)
        if row is None:  # forgotten or retired since the index was read
            continue
        hits.append(Hit(row.id, row.body, score, row.namespace, row.created_at, row.updated_at))
        occurrences[row.id] = row.occurrences
    return hits, occurrences


def _vector_candidates(conn: sqlite3.Connection, lane: int, query: np.ndarray, k: int):
    scored = [(rowid, max(0.0, min(1.0, sim))) for rowid, sim in memories.knn(conn, lane, query, k)]
    return scored, _hits(conn, scored)


def _lexical_candidates(conn: sqlite3.Connection, lane: int, match: str, k: int):
    scored = [(rowid, bm25_to_score(rank)) for rowid, rank in memories.fts(conn, lane, match, k)]
    return scored, _hits(conn, scored)


def check_dimension(conn: sqlite3.Connection, embedder: Embedder) -> bool:
    """True when the lane can be searched by vector; refuse a model of another dimension."""
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


async def search_lane(
    db: Database,
    embedder: Embedder | None,
    lane: int,
    query: str,
    limit: int,
    min_score: float | None,
    pending: Sequence[QueuedJob] = (),
) -> list[Hit]:
    query_vector: np.ndarray | None = None
    if embedder is not None and await db.read(check_dimension, embedder):
        query_vector = await anyio.to_thread.run_sync(embedder.embed_query, query)
    match = fts_query(query) if query_vector is None else None

    # Facts the vector index cannot see yet: jobs still queued (read-your-writes) and
    # memories stored while the model was unavailable. Scored here, like the rest.
    unindexed = [
        Hit(job.id, job.text, 0.0, job.namespace, job.created_at, job.created_at, pending=True) for job in pending
    ]
    occurrences: dict[str, int] = {}
    if query_vector is not None:
        for row in await db.read(memories.unembedded_in_lane, lane, MAX_UNINDEXED):
            unindexed.append(Hit(row.id, row.body, 0.0, row.namespace, row.created_at, row.updated_at))
            occurrences[row.id] = row.occurrences
    extra = await _score_directly(embedder if query_vector is not None else None, query_vector, query, unindexed)
    floor = min_score if min_score is not None else float("-inf")

    k = min(MAX_K, max(limit * 2, 10))
    while True:
        if query_vector is not None:
            scored, (hits, found) = await db.read(_vector_candidates, lane, query_vector, k)
        elif match is not None:
            scored, (hits, found) = await db.read(_lexical_candidates, lane, match, k)
        else:
            scored, hits, found = [], [], {}
        merged = sorted([*hits, *extra], key=lambda h: h.score, reverse=True)
        distinct = collapse_duplicates([h for h in merged if h.score >= floor], {**occurrences, **found})
        exhausted = len(scored) < k or k >= MAX_K or (scored and scored[-1][1] < floor)
        if len(distinct) >= limit or exhausted:
            return distinct[:limit]
        k = min(MAX_K, k * 4)


async def _score_directly(
    embedder: Embedder | None, query_vector: np.ndarray | None, query: str, items: Sequence[Hit]
) -> list[Hit]:
    """Score hits that are not in the indexes: cosine when possible, else the share of query words they contain."""
    if not items:
        return []
    scores: list[float] | None = None
    if embedder is not None and query_vector is not None:
        try:
            matrix = await anyio.to_thread.run_sync(embedder.embed_documents, [hit.text for hit in items])
            scores = [max(0.0, min(1.0, float(s))) for s in matrix @ query_vector]
        except Exception:  # a recall must not fail because curation's input is odd: match words
            log.exception("embedding %d unindexed facts for recall failed; matching their words", len(items))
    if scores is None:
        words = set(query_tokens(query))
        scores = [len(words & set(query_tokens(hit.text))) / len(words) if words else 0.0 for hit in items]
    return [replace(hit, score=score) for hit, score in zip(items, scores) if score > 0]
