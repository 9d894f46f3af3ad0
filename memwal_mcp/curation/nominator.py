"""Nominate candidates for the LLM decider. Similarity nominates; it never decides.

With an embedder: kNN over the lane's live memories (committed ones, which include
those created earlier in the same batch, since each job commits before the next is
evaluated), cosine >= threshold. Without one: a degraded lexical path over FTS5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

from ..embedding import readable
from ..recall.lexical import query_tokens
from ..store import StoreReader, VectorMatch, VectorSearch
from .prompt import Nominee

K = TypeVar("K")

LEXICAL_TERMS = 8
LEXICAL_MIN_CHARS = 3
LEXICAL_LIMIT = 5


def _hydrate(reader: StoreReader, lane: int, scored: Sequence[tuple[int, float | None]]) -> list[Nominee]:
    """Live memories of this lane only: a merge never crosses namespaces, whatever an index returned."""
    rows = reader.memories_by_pk([rowid for rowid, _ in scored])
    return [
        Nominee(rowid, rows[rowid].id, rows[rowid].body, score)
        for rowid, score in scored
        if rowid in rows and rows[rowid].lane == lane
    ]


def nearest_each(
    search: VectorSearch, vectors: Mapping[K, np.ndarray], k: int, threshold: float
) -> dict[K, list[VectorMatch]]:
    """The one nomination scan: for each vector, its k most similar memories of the lane at or
    above the threshold, from one matrix product over the lane. The worker runs it for a batch
    before its write transaction (off the writer, which every remember waits for), the batch's
    later runs inside it, and the no-LLM path afterwards to count what it would have nominated."""
    keys = list(vectors)
    if not keys:
        return {}
    return dict(zip(keys, search(np.stack([vectors[key] for key in keys]), k, threshold)))


def vector_nominees(
    reader: StoreReader,
    lane: int,
    vector: np.ndarray,
    k: int,
    threshold: float,
    candidates: list[VectorMatch] | None = None,
) -> list[Nominee]:
    """The k most similar live memories at or above the threshold. `candidates` (rowid, cosine),
    when given, were computed for a whole batch at once and replace the kNN query. A text the
    model cannot read has the zero vector: it resembles nothing, whatever the threshold."""
    if not readable(vector):
        return []
    if candidates is None:
        candidates = nearest_each(reader.vector_search(lane), {0: vector}, k, threshold)[0]
    scored = sorted(((pk, sim) for pk, sim in candidates if sim >= threshold), key=lambda c: -c[1])[:k]
    return _hydrate(reader, lane, scored)


def lexical_terms(text: str) -> list[str]:
    return [t for t in query_tokens(text, max_terms=256) if len(t) >= LEXICAL_MIN_CHARS][:LEXICAL_TERMS]


def lexical_nominees(reader: StoreReader, lane: int, text: str) -> list[Nominee]:
    terms = lexical_terms(text)
    if not terms:
        return []
    scored: list[tuple[int, float | None]] = [
        (pk, None) for pk, _ in reader.text_search([lane], terms, LEXICAL_LIMIT)[0]
    ]
    return _hydrate(reader, lane, scored)
