"""Where an idle recall's time goes, in-process: each step's CPU, the reader calls, the wall time.

    python -m benchmarks.recall_profile [--memories 2000] [--queries 200] [--db PATH]

On a real SQLite file of `speed_data` facts (seed 20; made with the real worker the first
time, kept when --db is given), the real model and `MemoryService.recall` (limit 5, queue
empty), prints:

- the recall p50 with the query vector cached and without it, and the embedding alone;
- per recall, the CPU time (the calling thread's, so a busy machine does not inflate it) of
  each search step and of each StoreReader method, and how many reader calls a recall makes
  with the time each spends inside the reader against the time its caller waits for it.

The steps are timed by wrapping the functions of this process: a few microseconds each, so
the figures are a little above what an unwrapped recall spends. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memwal_mcp.config import load_settings
from memwal_mcp.recall import search
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import backend, views

from . import speed_data

SEED = 20
NAMESPACE = "default"
LIMIT = 5
STEPS: tuple[str, ...] = ("_words_first", "_prepare", "_settle", "_nearest", "_candidates", "_in_context")
STEPS += ("_in_window", "_stored_copies", "_score_rows", "group_duplicates", "survivor")

cpu_ns: collections.Counter[str] = collections.Counter()
calls: collections.Counter[str] = collections.Counter()
hops: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)  # reader call -> (inside, awaited) ms


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        begun = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            cpu_ns[label] += time.thread_time_ns() - begun
            calls[label] += 1

    return run


def instrument() -> None:
    """Wrap the search's steps, every reader method and the store's read()."""
    for name in dir(views.SQLiteReader):
        if not name.startswith("_") and callable(getattr(views.SQLiteReader, name)):
            setattr(views.SQLiteReader, name, _timed(f"reader.{name}", getattr(views.SQLiteReader, name)))
    for name in STEPS:
        if hasattr(search, name):
            setattr(search, name, _timed(f"search.{name}", getattr(search, name)))
    search._Scorer._scored = _timed("search._Scorer._scored", search._Scorer._scored)  # type: ignore[method-assign]
    read = backend.SQLiteStore.read

    async def timed_read(self: backend.SQLiteStore, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        inside: list[float] = []

        def run(reader: Any, *a: Any, **k: Any) -> Any:
            begun = time.perf_counter()
            try:
                return fn(reader, *a, **k)
            finally:
                inside.append((time.perf_counter() - begun) * 1000)

        begun = time.perf_counter()
        result = await read(self, run, *args, **kwargs)
        hops[getattr(fn, "__name__", "?")].append((inside[0], (time.perf_counter() - begun) * 1000))
        return result

    backend.SQLiteStore.read = timed_read  # type: ignore[method-assign]


async def fill(db_path: Path, memories: int) -> None:
    settings = load_settings(db_path=db_path, llm={"base_url": None})
    service = MemoryService(settings)
    async with service.running(worker=True):
        for text in speed_data.facts(SEED, 0, memories):
            await service.remember(settings.owner, text, NAMESPACE)
        while await service.store.read(lambda r: r.queued_mark([lane.id for lane in r.owner_lanes(settings.owner)])):
            await asyncio.sleep(0.2)


async def profile(db_path: Path, memories: int, count: int) -> str:
    queries = speed_data.queries(SEED, memories, count + 10)
    settings = load_settings(db_path=db_path, llm={"base_url": None})
    service = MemoryService(settings)
    lines: list[str] = []
    async with service.running(worker=False):
        embedder = await service.embedder.get()
        assert embedder is not None
        cache = getattr(embedder, "_query_cache", None)
        for query in queries[:10]:  # warm-up
            await service.recall(settings.owner, query, LIMIT, NAMESPACE)
        queries = queries[10:]
        cached, uncached, embed = [], [], []
        for query in queries:
            if cache is not None:
                cache.clear()
            begun = time.perf_counter()
            await service.recall(settings.owner, query, LIMIT, NAMESPACE)
            uncached.append((time.perf_counter() - begun) * 1000)
            if cache is not None:
                cache.clear()
            begun = time.perf_counter()
            embedder.embed_query(query)
            embed.append((time.perf_counter() - begun) * 1000)
        instrument()
        for query in queries:  # the query's vector cached first: the steps without the embedding
            embedder.embed_query(query)
            begun = time.perf_counter()
            await service.recall(settings.owner, query, LIMIT, NAMESPACE)
            cached.append((time.perf_counter() - begun) * 1000)
    n = len(queries)
    lines.append(f"idle recall at {memories:,} memories, limit {LIMIT}, p50 of {n} distinct queries")
    lines.append(f"  recall, query vector cached      {statistics.median(cached):7.2f} ms (steps wrapped)")
    lines.append(f"  recall, query embedded           {statistics.median(uncached):7.2f} ms")
    lines.append(f"  query embedding alone            {statistics.median(embed):7.2f} ms")
    lines.append("")
    lines.append("CPU per recall (vector cached), by step and reader method:")
    for label, spent in sorted(cpu_ns.items(), key=lambda item: -item[1]):
        lines.append(f"  {label:36} {calls[label] / n:6.2f} calls {spent / n / 1e6:7.3f} ms")
    lines.append("")
    lines.append("reader calls per recall: time inside the reader / time its caller waited (p50 ms):")
    for name, pairs in hops.items():
        inside = statistics.median(p[0] for p in pairs)
        waited = statistics.median(p[1] for p in pairs)
        lines.append(f"  {name:36} {len(pairs) / n:6.2f} calls {inside:7.3f} / {waited:7.3f}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=2000, help="facts in the lane (default 2000)")
    parser.add_argument("--queries", type=int, default=200, help="distinct queries (default 200)")
    parser.add_argument("--db", type=Path, help="keep the database there (made when missing, reused otherwise)")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="memwal-recall-profile-") as scratch:
        db_path = args.db or Path(scratch) / "memwal.db"
        if not db_path.exists():
            await fill(db_path, args.memories)
        print(await profile(db_path, args.memories, args.queries))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
