"""Where the time goes: the recall and curation steps timed one by one, synchronously.

Runs the store functions that `recall.search` and the curation evaluator call, on
a plain connection on this thread (so cProfile sees them, which it cannot inside
aiosqlite's threads), over the lane as it is at this size. Read-only.
"""

from __future__ import annotations

import cProfile
import io
import logging
import pstats
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memwal_mcp.curation.evaluator import evaluate
from memwal_mcp.recall.lexical import content_terms
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.store.sqlite.views import SQLiteReader

log = logging.getLogger("benchmarks.speed")


class _Steps:
    """Milliseconds per named step. A step whose store function changed shape is skipped
    (logged once), so the probe never stops the benchmark."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {}
        self.broken: dict[str, str] = {}

    def __call__(self, name: str, fn: Callable[[], Any], default: Any = None) -> Any:
        if name in self.broken:
            return default
        started = time.perf_counter()
        try:
            value = fn()
        except Exception as exc:  # a probe, not a test
            self.broken[name] = f"{type(exc).__name__}: {exc}"
            log.warning("probe step %r skipped: %s", name, self.broken[name])
            return default
        self.ms.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        return value


def _steps(
    conn: Any,
    embedder: Any,
    settings: Any,
    lane: int,
    queries: Sequence[str],
    texts: Sequence[str],
    vectors: np.ndarray,
) -> _Steps:
    from memwal_mcp.recall import search as search_module

    reader = SQLiteReader(conn)
    step = _Steps()
    k = 100  # recall.search's first pool for limit=10: max(limit * 4, 100)
    for query in queries:
        cache = getattr(embedder, "_query_cache", None)
        if cache is not None and hasattr(cache, "clear"):
            cache.clear()
        qv = step("recall: embed query", lambda: embedder.embed_query(query))
        terms = content_terms(query)
        dense = step(
            f"recall: vector_search k={k} (in-memory matrix)", lambda: reader.vector_search(lane)(qv[None], k)[0], []
        )
        lexical = step(
            f"recall: text_search (FTS5 BM25) limit {k}", lambda: reader.text_search([lane], terms, k)[0], []
        )
        pks = list({r for r, _ in dense} | {r for r, _ in lexical})
        step("recall: memories_by_pk (candidate rows)", lambda: reader.memories_by_pk(pks))
        in_dense = {r for r, _ in dense}
        missing = [r for r, _ in lexical if r not in in_dense]
        step("recall: cosines of word-only candidates (matrix)", lambda: reader.cosines(lane, qv, missing))
        ranks = dict(lexical)
        step(
            "recall: candidates, kNN and word matches joined (search._candidates)",
            lambda: search_module._candidates(
                reader, [lane], qv, ranks, search_module._Nearest.of({lane: list(dense)}, k)
            ),
        )
    for text, vector in zip(texts, vectors):
        step(
            "curation: evaluate() (exact match + kNN nomination)",
            lambda: evaluate(reader, lane, text, vector, settings.curation, True),
        )  # llm_available: the inline scan
        step(
            f"curation: vector_search k={settings.curation.nominator_k} (matrix)",
            lambda: reader.vector_search(lane)(vector[None], settings.curation.nominator_k),
        )
    return step


def breakdown(
    db_path: Path,
    embedder: Any,
    settings: Any,
    lane: int,
    queries: Sequence[str],
    texts: Sequence[str],
    profile_to: Path | None = None,
) -> dict[str, dict[str, float]]:
    """Median and p90 milliseconds per step; with `profile_to`, also a cProfile dump and its top lines on stderr."""
    vectors = embedder.embed_documents(list(texts))
    conn = connect(db_path)
    try:
        if profile_to is None:
            steps = _steps(conn, embedder, settings, lane, queries, texts, vectors)
        else:
            profiler = cProfile.Profile()
            steps = profiler.runcall(_steps, conn, embedder, settings, lane, queries, texts, vectors)
            profile_to.parent.mkdir(parents=True, exist_ok=True)
            profiler.dump_stats(str(profile_to))
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(14)
            log.info("cProfile of the step probe (%s), top by own time:\n%s", profile_to, out.getvalue())
    finally:
        conn.close()
    return {
        name: {"p50_ms": round(statistics.median(v), 3), "p90_ms": round(float(np.percentile(v, 90)), 3), "n": len(v)}
        for name, v in steps.ms.items()
    }
