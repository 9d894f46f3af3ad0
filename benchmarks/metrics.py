"""Retrieval metrics: recall@k and nDCG@k with binary relevance, and latency percentiles.

A ranked list holds *keys* (one per distinct fact the recall returned, best first).
Evidence holds dataset ids; `resolve` maps a dataset id to the key of the fact it
became (several dataset ids may share a key when curation or the read-side collapse
folded them into one fact). A dataset id that resolves to None (its remember job
failed) can never be found, but still counts in the denominator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence

Resolver = Mapping[str, Hashable] | Callable[[str], Hashable] | None


def _resolver(resolve: Resolver) -> Callable[[str], Hashable]:
    if resolve is None:
        return lambda item: item
    if callable(resolve):
        return resolve
    return lambda item: resolve.get(item)


def _distinct(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def recall_at_k(ranked: Sequence[Hashable], evidence: Sequence[str], k: int, resolve: Resolver = None) -> float:
    """Share of the (distinct) evidence items whose fact is among the first k ranked keys."""
    if k < 1:
        raise ValueError("k must be at least 1")
    wanted = _distinct(evidence)
    if not wanted:
        raise ValueError("a query needs at least one evidence item")
    key = _resolver(resolve)
    top = set(ranked[:k])
    found = sum(1 for item in wanted if (fact := key(item)) is not None and fact in top)
    return found / len(wanted)


def ndcg_at_k(ranked: Sequence[Hashable], evidence: Sequence[str], k: int, resolve: Resolver = None) -> float:
    """nDCG@k with binary relevance: a ranked key is relevant (gain 1) if some evidence item resolves to it.

    The ideal ranking puts every distinct relevant fact first, so IDCG counts
    min(#distinct relevant facts, k) positions; an evidence item that resolves to
    nothing is a relevant fact that was never stored (it lowers the score, it is not ignored).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    wanted = _distinct(evidence)
    if not wanted:
        raise ValueError("a query needs at least one evidence item")
    key = _resolver(resolve)
    relevant: set[Hashable] = set()
    unresolved = 0
    for item in wanted:
        fact = key(item)
        if fact is None:
            unresolved += 1
        else:
            relevant.add(fact)
    ideal_count = min(len(relevant) + unresolved, k)
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, ideal_count + 1))
    seen: set[Hashable] = set()
    dcg = 0.0
    for rank, fact in enumerate(ranked[:k], start=1):
        if fact in relevant and fact not in seen:
            seen.add(fact)
            dcg += 1.0 / math.log2(rank + 1)
    return dcg / idcg


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return float("nan")
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
