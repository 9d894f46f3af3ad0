"""One lane of N memories on SQLite and on PostgreSQL, searched exactly and through its HNSW index.

    python -m benchmarks.pg_lanes                      # 100k memories
    python -m benchmarks.pg_lanes --n 30000 --workdir /tmp/pg-lanes   # keep both databases for a rerun

The same N facts (benchmarks/speed_data.py), embedded once (cached), go into a SQLite file through
the worker's own write path, and from it into a PostgreSQL database (a throwaway pgserver unless
--db-url) by `memwal-mcp migrate`'s code, verified record by record (--pg-fill worker runs the
worker's write path on PostgreSQL instead: the same rows, lane totals and word counts, slower).
Then, per query: recall p50 on SQLite beside PostgreSQL with the lane searched exactly (no index),
and again beside PostgreSQL with the lane's HNSW index (built by the store's own maintenance pass,
timed); the raw parts of a recall on each (one kNN of k=100, one word search); overlap@10 of the
HNSW kNN against the exact kNN; the index's build time and size. Figures to stdout, logs to
stderr, JSON with --json-out.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import speed_data, speed_proc
from .speed import summary

log = logging.getLogger("benchmarks.pg_lanes")

OWNER = "local"
NAMESPACE = "default"
LIMIT = 10
K = 100  # what a recall of limit 10 asks each lane's kNN and word search for (recall/search.py)
QUEUE_CHUNK = 500
EXACT_ONLY = 10**9  # hnsw_min_rows no lane reaches: the pass drops every lane index


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pg_lanes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the lane (default 100000)")
    parser.add_argument("--queries", type=int, default=100, help="recall queries per phase (default 100)")
    parser.add_argument("--seed", type=int, default=7, help="synthetic data seed (default 7)")
    parser.add_argument("--min-rows", type=int, default=20_000, help="hnsw_min_rows for the HNSW phase (default 20000)")
    parser.add_argument("--db-url", help="an empty PostgreSQL database to fill (default: a throwaway pgserver)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the SQLite file, the pgserver data and the vectors here; a rerun with the same --n and"
        " --seed measures them again without filling",
    )
    parser.add_argument("--cache", type=Path, help="where embedded facts are cached (default: the workdir)")
    parser.add_argument(
        "--pg-fill",
        choices=("migrate", "worker"),
        default="migrate",
        help="how PostgreSQL is filled: 'migrate' moves the SQLite file (filled by the worker's write path)"
        " with memwal-mcp migrate's own code, verified record by record (default); 'worker' runs the worker's"
        " write path on PostgreSQL too (about 135 memories/s here)",
    )
    parser.add_argument("--json-out", type=Path, help="write the JSON there")
    parser.add_argument("--log-level", default="WARNING", help="memwal's own log level on stderr")
    return parser.parse_args(argv)


def _settings(**overrides: Any) -> Any:
    from memwal_mcp.config import load_settings

    return load_settings(llm={"base_url": None}, **overrides)


# --- the data -------------------------------------------------------------------------------


def _vectors(embedder: Any, texts: Sequence[str], cache: Path, seed: int) -> np.ndarray:
    key = hashlib.sha256(f"{embedder.model_id}|{seed}|{len(texts)}".encode()).hexdigest()[:16]
    path = cache / f"pg-lanes-{len(texts)}-{key}.npy"
    if path.exists():
        log.info("vectors: %s (cached)", path)
        return np.load(path)
    started = time.perf_counter()
    parts: list[np.ndarray] = []
    for start in range(0, len(texts), 1024):
        parts.append(embedder.embed_documents(list(texts[start : start + 1024])))
        done = start + len(parts[-1])
        rate = done / (time.perf_counter() - started)
        log.info("embedded %d/%d (%.0f/s, about %.0f s left)", done, len(texts), rate, (len(texts) - done) / rate)
    vectors = np.concatenate(parts).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


async def _migrate(sqlite_path: Path, url: str) -> dict[str, Any]:
    """PostgreSQL filled from the SQLite file by `memwal-mcp migrate`'s own code (transfer/migrate.py):
    the same jobs, memories, vectors, counters and deferred nominee counts, imported in batches of
    whole transactions with the lane totals and word counts added per batch, then compared record
    by record. Refuses to go on unless it says verified."""
    from memwal_mcp.transfer.migrate import migrate

    started = time.perf_counter()
    report = await migrate(sqlite_path, _settings(db_url=url, storage={"hnsw_min_rows": EXACT_ONLY}))
    seconds = time.perf_counter() - started
    if not report.verified:
        problems = report.source_problems + report.target_problems + report.differences
        raise SystemExit(f"the migration into PostgreSQL is not verified: {problems[:5]}")
    if report.vectors != "copied":
        raise SystemExit(f"the migration did not copy the vectors: {report.vectors} ({report.vector_note})")
    log.info("migrated into PostgreSQL in %.1f s %s: %s", seconds, report.seconds, report.added)
    return {"postgresql_s": round(seconds, 1), "postgresql_phases_s": report.seconds, "vectors": report.vector_count}


async def _fill(service: Any, texts: Sequence[str], vectors: np.ndarray, model_id: str) -> float:
    """Every fact as a job, curated by the worker's write path with its precomputed vector
    (benchmarks/speed_fill.py's direct fill, without embedding twice)."""
    from memwal_mcp.store.records import JobRequest

    from .speed_fill import bulk_curate

    started = time.perf_counter()
    for start in range(0, len(texts), QUEUE_CHUNK):
        requests = [JobRequest(NAMESPACE, text) for text in texts[start : start + QUEUE_CHUNK]]
        await service.store.write(lambda w, r=requests: w.insert_jobs(OWNER, r, time.time()))
    index_of = {text: i for i, text in enumerate(texts)}

    async def cached(batch: list[str]) -> np.ndarray:
        return vectors[[index_of[text] for text in batch]]

    await bulk_curate(service, model_id, int(vectors.shape[1]), OWNER, NAMESPACE, len(texts), cached)
    return time.perf_counter() - started


# --- measuring ------------------------------------------------------------------------------


def _timed_in_unit(fn: Callable[[Any], Any]) -> Callable[[Any], tuple[Any, float]]:
    """fn inside the unit of work, timed there (not the hop to the store's thread)."""

    def run(reader: Any) -> tuple[Any, float]:
        started = time.perf_counter()
        result = fn(reader)
        return result, (time.perf_counter() - started) * 1000

    return run


def _word_search(lane: int, words: list[str]) -> Callable[[Any], Any]:
    def search(reader: Any) -> Any:
        return reader.text_search([lane], words, K)

    return search


def _every_match(lane: int, words: list[str]) -> Callable[[Any], Any]:
    """PostgreSQL's word search as it was before MaxScore: every match scored."""
    from memwal_mcp.store.postgres import text

    def every_match(reader: Any) -> Any:
        return text.search_every_match(reader.conn, [lane], words, K)

    return every_match


async def _raw(service: Any, lane: int, query_vectors: np.ndarray, terms: Sequence[list[str]]) -> dict[str, Any]:
    """One kNN (k=100) and one word search per query, each timed inside its unit of work."""
    knn_ms: list[float] = []
    words_ms: list[float] = []
    every_ms: list[float] = []
    tops: list[list[int]] = []
    answers: dict[str, list[Any]] = {}
    every = service.settings.database_url is not None
    search = await service.store.read(lambda r: r.vector_search(lane))
    indexed = bool(getattr(search, "indexed", False))
    for vector, words in zip(query_vectors, terms):
        started = time.perf_counter()
        found = search(vector[None, :], K)[0]
        knn_ms.append((time.perf_counter() - started) * 1000)
        tops.append([m.pk for m in found[:LIMIT]])
        order = [_word_search(lane, words), _every_match(lane, words)] if every else [_word_search(lane, words)]
        if every and len(words_ms) % 2:
            order.reverse()  # interleaved, in turns
        for fn in order:
            found, ms = await service.store.read(_timed_in_unit(fn))
            (every_ms if fn.__name__ == "every_match" else words_ms).append(ms)
            answers.setdefault(fn.__name__, []).append(found)
    out = {"indexed": indexed, "knn_ms": summary(knn_ms), "words_ms": summary(words_ms), "top10": tops}
    if every:
        out["words_every_match_ms"] = summary(every_ms)
        out["words_differ"] = sum(a != b for a, b in zip(answers["search"], answers["every_match"]))
    return out


async def _recalls(
    services: dict[str, Any], queries: Sequence[str]
) -> tuple[dict[str, dict[str, float]], dict[str, list[list[str]]]]:
    """Recall p50 per service, interleaved query by query in rotating order; each pays its
    embedding. Also each service's answers (memory ids, best first): migrate keeps the ids, so
    the backends' answers compare id by id."""
    from .speed import _clear_query_cache

    names = list(services)
    ms: dict[str, list[float]] = {name: [] for name in names}
    answers: dict[str, list[list[str]]] = {name: [] for name in names}
    for name in names:
        for warm in ("warm-up one", "warm-up two", "warm-up three"):
            await services[name].recall(OWNER, warm, limit=LIMIT, namespace=NAMESPACE)
    for index, query in enumerate(queries):
        for name in names[index % len(names) :] + names[: index % len(names)]:
            _clear_query_cache(services[name].embedder)
            started = time.perf_counter()
            result = await services[name].recall(OWNER, query, limit=LIMIT, namespace=NAMESPACE)
            ms[name].append((time.perf_counter() - started) * 1000)
            answers[name].append([hit.id for hit in result.hits])
    return {name: summary(values) for name, values in ms.items()}, answers


async def _build(store: Any, lane: int) -> dict[str, Any]:
    from memwal_mcp.store.postgres import lane_indexes

    started = time.perf_counter()
    done = await store.maintain_indexes()
    while done.busy:  # a write's background pass got there first: wait for it
        await asyncio.sleep(0.5)
        done = await store.maintain_indexes()
    seconds = time.perf_counter() - started
    indexes = await store.read(lambda r: lane_indexes.lane_indexes(r.conn))
    mine = [index for index in indexes if index.lane == lane and index.valid]
    return {"build_s": round(seconds, 2), "size_bytes": mine[0].size_bytes if mine else None, "built": bool(mine)}


def _overlaps(got: Sequence[Sequence[int]], exact: Sequence[Sequence[int]]) -> list[float]:
    return [len(set(a) & set(b)) / max(1, min(LIMIT, len(b))) for a, b in zip(got, exact)]


async def _with(services: dict[str, Any], body: Callable[[], Awaitable[Any]]) -> Any:
    for service in services.values():
        await service.start(False)
    try:
        return await body()
    finally:
        for service in services.values():
            await service.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from memwal_mcp.embedding import FastEmbedEmbedder
    from memwal_mcp.recall.lexical import content_terms
    from memwal_mcp.service import MemoryService

    from .speed_fill import lane_of

    report: dict[str, Any] = {"n": args.n, "machine": speed_proc.machine_info(), "loadavg_start": speed_proc.loadavg()}
    with tempfile.TemporaryDirectory(prefix="memwal-pg-lanes-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        marker = workdir / f"filled-{args.n}-{args.seed}"
        server = None
        url = args.db_url
        if url is None:
            import pgserver

            server = pgserver.get_server(workdir / "pgdata", cleanup_mode="stop")  # stops; the data stays
            url = server.get_uri()
        try:
            sqlite_path = workdir / "memwal.db"
            embedder = FastEmbedEmbedder(_settings().embedding)
            texts = list(speed_data.facts(args.seed, 0, args.n))
            queries = speed_data.queries(args.seed, args.n, args.queries)
            sqlite = MemoryService(_settings(db_path=sqlite_path), embedder=embedder)
            exact = MemoryService(_settings(db_url=url, storage={"hnsw_min_rows": EXACT_ONLY}), embedder=embedder)
            if not marker.exists():
                if sqlite_path.exists():
                    raise SystemExit(f"{sqlite_path} exists but was not filled to {args.n}: use another --workdir")
                vectors = _vectors(embedder, texts, args.cache or workdir, args.seed)

                async def fill() -> dict[str, Any]:
                    filled: dict[str, Any] = {
                        "sqlite_s": round(await _fill(sqlite, texts, vectors, embedder.model_id), 1)
                    }
                    if args.pg_fill == "worker":
                        filled["postgresql_s"] = round(await _fill(exact, texts, vectors, embedder.model_id), 1)
                    return filled

                if args.pg_fill == "worker":
                    report["fill"] = await _with({"sqlite": sqlite, "exact": exact}, fill)
                else:
                    report["fill"] = await _with({"sqlite": sqlite}, fill)
                    report["fill"].update(await _migrate(sqlite_path, url))
                report["fill"]["postgresql_by"] = args.pg_fill
                marker.write_text("filled\n")
                log.info("filled: %s", report["fill"])
                sqlite = MemoryService(_settings(db_path=sqlite_path), embedder=embedder)
                exact = MemoryService(_settings(db_url=url, storage={"hnsw_min_rows": EXACT_ONLY}), embedder=embedder)
            query_vectors = np.stack([embedder.embed_query(q) for q in queries])
            terms = [content_terms(q) for q in queries]

            async def exact_phase() -> dict[str, Any]:
                pg_store: Any = exact.store
                await pg_store.maintain_indexes()  # drops an index a previous run left
                lanes = {
                    "sqlite": await sqlite.store.read(lane_of, OWNER, NAMESPACE),
                    "exact": await exact.store.read(lane_of, OWNER, NAMESPACE),
                }
                recall_ms, answers = await _recalls({"sqlite": sqlite, "postgresql_exact": exact}, queries)
                return {
                    "lanes": lanes,
                    "recall_ms": recall_ms,
                    "answers": answers,
                    "raw_sqlite": await _raw(sqlite, lanes["sqlite"], query_vectors, terms),
                    "raw_postgresql_exact": await _raw(exact, lanes["exact"], query_vectors, terms),
                }

            first = await _with({"sqlite": sqlite, "exact": exact}, exact_phase)
            sqlite = MemoryService(_settings(db_path=sqlite_path), embedder=embedder)
            hnsw = MemoryService(_settings(db_url=url, storage={"hnsw_min_rows": args.min_rows}), embedder=embedder)
            pg_lane = first["lanes"]["exact"]

            async def hnsw_phase() -> dict[str, Any]:
                built = await _build(hnsw.store, pg_lane)
                recall_ms, answers = await _recalls({"sqlite": sqlite, "postgresql_hnsw": hnsw}, queries)
                return {
                    "index": built,
                    "recall_ms": recall_ms,
                    "answers": answers,
                    "raw_postgresql_hnsw": await _raw(hnsw, pg_lane, query_vectors, terms),
                }

            second = await _with({"sqlite": sqlite, "hnsw": hnsw}, hnsw_phase)
            embedder.close()
        finally:
            if server is not None:
                server.cleanup()
    overlaps = _overlaps(second["raw_postgresql_hnsw"]["top10"], first["raw_postgresql_exact"]["top10"])
    # What a user sees: each recall's ten hits against PostgreSQL's with the lane scanned exactly.
    reference = first["answers"].pop("postgresql_exact")
    answered = {
        "sqlite": first["answers"].pop("sqlite"),
        "postgresql_hnsw": second["answers"].pop("postgresql_hnsw"),
    }
    second["answers"].clear()
    recall_overlaps = {name: _overlaps(got, reference) for name, got in answered.items()}
    for phase in (first, second):
        for key in [k for k in phase if k.startswith("raw_")]:
            phase[key].pop("top10")
    report.update(
        {
            "exact_phase": first,
            "hnsw_phase": second,
            "overlap_at_10_hnsw_vs_exact": round(float(np.mean(overlaps)), 4),
            "overlap_min": round(float(np.min(overlaps)), 4),
            # The questions whose HNSW top 10 missed some of the exact top 10 (worst first).
            "overlap_below_1": [
                [queries[i], round(overlaps[i], 2)] for i in np.argsort(overlaps, kind="stable") if overlaps[i] < 1.0
            ],
            "queries": len(queries),
            "recall_vs_exact": {
                name: {
                    "overlap_at_10": round(float(np.mean(values)), 4),
                    "min": round(float(np.min(values)), 4),
                    "identical": sum(got == want for got, want in zip(answered[name], reference)),
                    "below_1": [
                        [queries[i], round(values[i], 2)] for i in np.argsort(values, kind="stable") if values[i] < 1.0
                    ],
                }
                for name, values in recall_overlaps.items()
            },
            "loadavg_end": speed_proc.loadavg(),
        }
    )
    for phase in (first, second):
        phase.pop("answers")
    return report


def format_report(report: dict[str, Any]) -> str:
    first, second = report["exact_phase"], report["hnsw_phase"]
    p50 = lambda part: part["p50"]  # noqa: E731
    a, b = first["recall_ms"], second["recall_ms"]
    raw = {
        "sqlite": first["raw_sqlite"],
        "postgresql exact": first["raw_postgresql_exact"],
        "postgresql hnsw": second["raw_postgresql_hnsw"],
    }
    lines = [
        f"pg_lanes: one lane of {report['n']} memories (load average {report['loadavg_start']} -> {report['loadavg_end']})",
    ]
    if "fill" in report:
        fill = report["fill"]
        how = "migrated from the SQLite file, verified" if fill.get("postgresql_by") == "migrate" else "worker path"
        lines.append(f"fill: SQLite {fill['sqlite_s']} s (worker path), PostgreSQL {fill['postgresql_s']} s ({how})")
    index = second["index"]
    size = f"{index['size_bytes'] / 2**20:.0f} MiB" if index["size_bytes"] else "-"
    lines += [
        f"HNSW index: built in {index['build_s']} s, {size}",
        "",
        "recall p50 (ms), interleaved per phase:",
        f"  exact phase: SQLite {p50(a['sqlite']):.1f}, PostgreSQL exact {p50(a['postgresql_exact']):.1f}"
        f" = {p50(a['postgresql_exact']) / p50(a['sqlite']):.2f}x SQLite",
        f"  HNSW phase:  SQLite {p50(b['sqlite']):.1f}, PostgreSQL HNSW {p50(b['postgresql_hnsw']):.1f}"
        f" = {p50(b['postgresql_hnsw']) / p50(b['sqlite']):.2f}x SQLite",
        "",
        f"raw parts of a recall, p50 (ms): kNN k={K}, word search k={K}",
    ]
    for name, part in raw.items():
        every = part.get("words_every_match_ms")
        before = f"  (every match scored: {p50(every):.2f}; {part['words_differ']} answers differ)" if every else ""
        lines.append(f"  {name:<17} kNN {p50(part['knn_ms']):7.2f}  words {p50(part['words_ms']):7.2f}{before}")
    exact_knn, hnsw_knn = p50(raw["postgresql exact"]["knn_ms"]), p50(raw["postgresql hnsw"]["knn_ms"])
    lines += [
        f"  kNN exact / HNSW on PostgreSQL: {exact_knn / hnsw_knn:.1f}x",
        f"overlap@10 HNSW vs exact: {report['overlap_at_10_hnsw_vs_exact']} (min {report['overlap_min']})",
    ]
    lines += [f"  {overlap:.1f}: {question}" for question, overlap in report.get("overlap_below_1", [])]
    lines.append(
        "recall's ten hits against PostgreSQL's with the lane scanned exactly (overlap@10, identical answers):"
    )
    for name, figures in report.get("recall_vs_exact", {}).items():
        lines.append(
            f"  {name:<17} {figures['overlap_at_10']} (min {figures['min']}),"
            f" {figures['identical']} of {report['queries']} identical"
        )
        lines += [f"    {overlap:.1f}: {question}" for question, overlap in figures["below_1"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from memwal_mcp.logs import setup_logging

    setup_logging(args.log_level)
    logging.getLogger("benchmarks").setLevel(logging.INFO)
    report = asyncio.run(run(args))
    print(format_report(report))
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
