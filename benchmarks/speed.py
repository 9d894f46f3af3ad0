"""Speed benchmark: remember and recall latency, curation throughput, cold start, peak RSS.

    python -m benchmarks.speed                          # 10k memories, a few minutes
    python -m benchmarks.speed --memories 10000,100000,1000000 --json-out speed.json

One database file grows through the sizes (10k, then +90k, then +900k): every fact
goes through the real write path (a job in the journal, curated by the real
CurationWorker; see speed_fill.py for the `--fill direct` shortcut). At each size:
cold start, remember latency (in-process and over stdio), recall latency (hybrid
and dense in-process, hybrid over stdio) against a reference -- the query embedding
plus an exact NumPy float32 scan of the same vectors -- with overlap@10 of dense
recall against that exact top 10, and peak RSS. The machine is noisy, so every
target is a ratio against a reference measured in the same run, or a fixed bound.
Table to stdout, logs to stderr, JSON with --json-out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from . import speed_data, speed_proc
from .metrics import percentile
from .speed_report import format_report, targets

log = logging.getLogger("benchmarks.speed")

OWNER_DEFAULT = "local"
NAMESPACE = "default"
LIMIT = 10


def _comma_ints(values: Sequence[str] | None, default: Sequence[int]) -> list[int]:
    items = [int(p.replace("_", "")) for v in values or () for p in v.split(",") if p.strip()]
    return sorted(set(items)) or list(default)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--memories", action="append", metavar="N[,N...]", help="lane sizes, one growing database (default 10000)"
    )
    parser.add_argument("--queries", type=int, default=100, help="recall queries per size and path (default 100)")
    parser.add_argument("--remembers", type=int, default=200, help="remember calls per size and path (default 200)")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold starts per server (median; default 5)")
    parser.add_argument(
        "--fill",
        choices=("worker", "direct"),
        default="worker",
        help="worker: every job through the real worker (default); direct: see --curate-sample",
    )
    parser.add_argument(
        "--curate-sample",
        type=int,
        default=2000,
        help="--fill direct: jobs per size curated (and timed) by the real worker (default 2000)",
    )
    parser.add_argument(
        "--raw-max",
        type=int,
        default=1000,
        help="most of the curated texts embedded again by raw fastembed (evenly spaced; default 1000)",
    )
    parser.add_argument("--probe-queries", type=int, default=20, help="queries for the per-step probe (default 20)")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="also cProfile the probe; .prof files go here")
    parser.add_argument(
        "--skip", action="append", default=[], choices=("cold", "stdio", "probe"), help="leave a phase out (repeatable)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--db",
        type=Path,
        help="keep the database at this path; if it exists (left by an earlier run), continue it:"
        " its lane keeps its facts and only sizes above them add more",
    )
    parser.add_argument("--json-out", type=Path, help="write the JSON report here")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="level for memwal's own logs (the benchmark's progress is always shown)",
    )
    args = parser.parse_args(argv)
    args.sizes = _comma_ints(args.memories, (10_000,))
    if args.sizes[0] < 20:
        parser.error("--memories must be at least 20")
    return args


def summary(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 3),
        "p90": round(percentile(values, 90), 3),
        "p99": round(percentile(values, 99), 3),
        "mean": round(sum(values) / len(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _clear_query_cache(embedder: Any) -> None:
    cache = getattr(embedder, "_query_cache", None)
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()


def _settings(db_path: Path, mode: str = "hybrid") -> Any:
    from memwal_mcp.config import load_settings

    return load_settings(db_path=db_path, recall={"mode": mode}, llm={"base_url": None})


# --- phases ----------------------------------------------------------------------------


async def remember_latency(
    db_path: Path, embedder: Any, owner: str, texts: Sequence[str], namespace: str, worker: bool
) -> list[float]:
    """MemoryService.remember, one call at a time; the worker (when on) curates alongside, as in the server."""
    from memwal_mcp.service import MemoryService

    from .speed_fill import queued_count, run_worker

    service = MemoryService(_settings(db_path), embedder=embedder)
    ms: list[float] = []
    async with service.running(worker=worker):
        for text in texts:
            started = time.perf_counter()
            await service.remember(owner, text, namespace=namespace)
            ms.append((time.perf_counter() - started) * 1000)
        if not worker:
            await run_worker(service, "remembered jobs", len(texts))
        else:
            while await service.store.read(queued_count):
                await asyncio.sleep(0.05)
    return ms


def _lane_vectors(db_path: Path, lane: int) -> tuple[np.ndarray, np.ndarray]:
    from memwal_mcp.store.sqlite.connection import connect

    conn = connect(db_path)
    try:
        count, dim = conn.execute(
            "SELECT COUNT(*), MAX(m.dim) FROM memory_vectors, embedding_meta m WHERE lane_id = ?", (lane,)
        ).fetchone()
        rowids = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, dim or 0), dtype=np.float32)
        cursor = conn.execute("SELECT rowid, embedding FROM memory_vectors WHERE lane_id = ?", (lane,))
        filled = 0
        while rows := cursor.fetchmany(10_000):
            rowids[filled : filled + len(rows)] = [r for r, _ in rows]
            block = np.frombuffer(b"".join(blob for _, blob in rows), np.float32)
            matrix[filled : filled + len(rows)] = block.reshape(len(rows), -1)
            filled += len(rows)
    finally:
        conn.close()
    return rowids[:filled], matrix[:filled]


def _facts_in_lane(db_path: Path, owner: str) -> int:
    """How many facts an earlier run put in the measured lane (facts are numbered from 0)."""
    from memwal_mcp.store.sqlite.connection import connect

    conn = connect(db_path)
    try:
        return conn.execute(
            "SELECT COUNT(*) FROM remember_jobs WHERE owner = ? AND namespace = ?", (owner, NAMESPACE)
        ).fetchone()[0]
    finally:
        conn.close()


def _ids_of(db_path: Path, rowids: set[int]) -> dict[int, str]:
    from memwal_mcp.store.sqlite.connection import connect

    conn = connect(db_path)
    try:
        found: dict[int, str] = {}
        ordered = sorted(rowids)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(conn.execute(f"SELECT rowid, id FROM memories WHERE rowid IN ({marks})", chunk).fetchall())
        return found
    finally:
        conn.close()


async def recall_phase(db_path: Path, embedder: Any, owner: str, lane: int, queries: Sequence[str]) -> dict[str, Any]:
    """Hybrid and dense recall in-process and the exact NumPy reference, interleaved query by query."""
    from memwal_mcp.service import MemoryService

    hybrid = MemoryService(_settings(db_path, "hybrid"), embedder=embedder)
    dense = MemoryService(_settings(db_path, "dense"), embedder=embedder)
    timings: dict[str, list[float]] = {"hybrid": [], "dense": [], "reference": []}
    dense_ids: list[list[str]] = []
    exact_rowids: list[list[int]] = []
    async with hybrid.running(worker=False), dense.running(worker=False):
        for service in (hybrid, dense):
            for warm in ("warm-up one", "warm-up two", "warm-up three"):
                await service.recall(owner, warm, limit=LIMIT, namespace=NAMESPACE)
        rss_before_reference = maxrss_bytes()
        load_started = time.perf_counter()
        rowids, matrix = _lane_vectors(db_path, lane)
        load_s = time.perf_counter() - load_started
        log.info("reference: %d vectors loaded in %.1f s", len(rowids), load_s)

        def reference(query: str) -> list[int]:
            vector = embedder.embed_query(query)
            scores = matrix @ vector
            top = np.argpartition(-scores, LIMIT)[:LIMIT] if len(scores) > LIMIT else np.arange(len(scores))
            return rowids[top[np.argsort(-scores[top])]].tolist()

        for index, query in enumerate(queries):
            order = ("hybrid", "dense", "reference")
            for name in order[index % 3 :] + order[: index % 3]:  # rotate, so no path always goes first
                _clear_query_cache(embedder)
                started = time.perf_counter()
                if name == "reference":
                    exact_rowids.append(reference(query))
                else:
                    result = await (hybrid if name == "hybrid" else dense).recall(
                        owner, query, limit=LIMIT, namespace=NAMESPACE
                    )
                    if name == "dense":
                        dense_ids.append([hit.id for hit in result.hits])
                timings[name].append((time.perf_counter() - started) * 1000)
    matrix = np.empty((0, 0), dtype=np.float32)  # the reference's copy is no longer needed
    id_of = _ids_of(db_path, {r for top in exact_rowids for r in top})
    overlaps = [
        len(set(got) & {id_of.get(r) for r in exact}) / max(1, min(LIMIT, len(exact)))
        for got, exact in zip(dense_ids, exact_rowids)
    ]
    return {
        "latency_ms": {name: summary(values) for name, values in timings.items()},
        "overlap_at_10": round(float(np.mean(overlaps)), 4),
        "overlap_min": round(float(np.min(overlaps)), 4),
        "reference_vectors": int(len(rowids)),
        "reference_load_s": round(load_s, 2),
        "rss_in_process_bytes": rss_before_reference,
    }


async def measure_size(
    args: argparse.Namespace, db_path: Path, embedder: Any, owner: str, start: int, size: int, workdir: Path
) -> dict[str, Any]:
    from memwal_mcp.service import MemoryService

    from .speed_fill import grow, lane_of

    out: dict[str, Any] = {"size": size}
    fill_service = MemoryService(_settings(db_path), embedder=embedder)
    async with fill_service.running(worker=False):
        fill = await grow(
            fill_service,
            embedder,
            owner,
            NAMESPACE,
            args.seed,
            start,
            size,
            args.fill,
            args.curate_sample,
            args.raw_max,
        )
        lane = await fill_service.store.read(lane_of, owner, NAMESPACE)
        live = await fill_service.store.read(lambda reader: reader.live_count(lane))
    out["fill"] = {
        "mode": args.fill,
        "added": fill.added,
        "live_memories": live,
        "queue_s": round(fill.queue_s, 2),
        "bulk_s": round(fill.bulk_s, 2),
        "curated_by_worker": fill.curated,
        "curate_s": round(fill.curate_s, 2),
        "curation_per_s": round(fill.curation_per_s, 2),
        "matrix_sync_s": round(fill.matrix_sync_s, 2),
        "copies_load_s": round(fill.copies_load_s, 2),
        "nominees_counted_after": fill.counted,
        "count_after_s": round(fill.count_s, 2),
        "raw_fastembed_texts": fill.raw_texts,
        "raw_fastembed_s": round(fill.raw_s, 2),
        "raw_fastembed_per_s": round(fill.raw_per_s, 2),
        "decisions": fill.decisions,
    }

    if "cold" not in args.skip:
        log.info("cold start: %d runs of each server", args.cold_runs)
        cold = await speed_proc.cold_start(db_path, args.cold_runs, workdir)
        out["cold_start_ms"] = {
            "memwal": summary([s * 1000 for s in cold.memwal_s]),
            "minimal_sdk": summary([s * 1000 for s in cold.minimal_s]),
            "memwal_tools": cold.memwal_tools,
        }

    log.info("remember latency in-process (%d calls, worker running, then idle)", args.remembers)
    texts = speed_data.remember_texts(args.seed, f"in-process-{size}", args.remembers)
    on = await remember_latency(db_path, embedder, owner, texts, "speed-remember", worker=True)
    texts = speed_data.remember_texts(args.seed, f"in-process-idle-{size}", args.remembers)
    off = await remember_latency(db_path, embedder, owner, texts, "speed-remember-idle", worker=False)
    out["remember_ms"] = {"in_process": summary(on), "in_process_worker_idle": summary(off)}

    queries = speed_data.queries(args.seed, size, args.queries)
    log.info("recall: %d queries, hybrid and dense in-process and the NumPy reference, interleaved", len(queries))
    recall = await recall_phase(db_path, embedder, owner, lane, queries)
    out["recall"] = recall
    out["rss_bytes"] = {"in_process": recall.pop("rss_in_process_bytes")}

    if "stdio" not in args.skip:
        log.info("stdio: %d recalls and %d remembers through the mcp client", len(queries), args.remembers)
        texts = speed_data.remember_texts(args.seed, f"stdio-{size}", args.remembers)
        stdio = await speed_proc.stdio_calls(
            db_path, queries, texts, "speed-remember-stdio", workdir / "stdio.stderr.log", LIMIT
        )
        out["recall"]["latency_ms"]["stdio_hybrid"] = summary(stdio.recall_ms)
        out["remember_ms"]["stdio"] = summary(stdio.remember_ms)
        out["remember_ms"]["stdio_curated_meanwhile"] = stdio.remembers_curated
        out["rss_bytes"]["stdio_server"] = stdio.peak_rss
        log.info(
            "stdio: %d remembers to `memwal-mcp serve --no-worker`, %d pings to the minimal server",
            args.remembers,
            args.remembers,
        )
        texts = speed_data.remember_texts(args.seed, f"stdio-idle-{size}", args.remembers)
        idle = await speed_proc.stdio_calls(
            db_path,
            (),
            texts,
            "speed-remember-stdio-idle",
            workdir / "stdio.stderr.log",
            LIMIT,
            ("serve", "--no-worker"),
        )
        out["remember_ms"]["stdio_worker_off"] = summary(idle.remember_ms)
        out["remember_ms"]["stdio_ping_minimal_sdk"] = summary(await speed_proc.stdio_ping(workdir, args.remembers))
        drain = MemoryService(_settings(db_path), embedder=embedder)
        async with drain.running(worker=False):  # what the server left queued, so the next size starts clean
            from .speed_fill import run_worker

            await run_worker(drain, "leftover stdio jobs", 2 * args.remembers)

    if "probe" not in args.skip:
        from .speed_probe import breakdown

        probe_queries = speed_data.queries(args.seed + 1, size, args.probe_queries)
        probe_texts = speed_data.remember_texts(args.seed, f"probe-{size}", args.probe_queries)
        profile_to = args.profile / f"probe-{size}.prof" if args.profile else None
        out["probe_ms"] = breakdown(db_path, embedder, _settings(db_path), lane, probe_queries, probe_texts, profile_to)
    out["targets"] = targets(out)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from memwal_mcp.embedding import FastEmbedEmbedder

    started = time.perf_counter()
    report: dict[str, Any] = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": speed_proc.machine_info(),
        "sizes": args.sizes,
        "fill": args.fill,
        "seed": args.seed,
        "queries": args.queries,
        "remembers": args.remembers,
        "recall_limit": LIMIT,
        "database": "one file, growing through the sizes",
        "results": [],
    }
    with tempfile.TemporaryDirectory(prefix="memwal-speed-") as tmp:
        workdir = Path(tmp)
        db_path = args.db or workdir / "speed.db"
        settings = _settings(db_path)
        owner = settings.owner or OWNER_DEFAULT
        report["embedding"] = {
            "model": settings.embedding.model,
            "batch_size": settings.embedding.batch_size,
            "worker_batch": settings.curation.batch_size,
        }
        loaded = time.perf_counter()
        embedder = FastEmbedEmbedder(settings.embedding)
        log.info("embedding model loaded in %.1f s", time.perf_counter() - loaded)
        try:
            previous = _facts_in_lane(db_path, owner) if db_path.exists() else 0
            if previous:
                report["database"] = f"continued from {db_path} with {previous:,} facts in the lane"
                log.info("continuing %s: %d facts already in the lane", db_path, previous)
            for size in args.sizes:
                log.info("=== size %d (adding %d) ===", size, max(0, size - previous))
                size_started = time.perf_counter()
                result = await measure_size(args, db_path, embedder, owner, min(previous, size), size, workdir)
                result["seconds"] = round(time.perf_counter() - size_started, 1)
                report["results"].append(result)
                previous = max(previous, size)
        finally:
            embedder.close()  # its background copies: ONNX Runtime aborts an exit with them running
        report["database_bytes"] = sum(p.stat().st_size for p in db_path.parent.glob(db_path.name + "*"))
    report["machine"]["loadavg_end"] = speed_proc.loadavg()
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def main(argv: Sequence[str] | None = None, *, configure_logging: bool = True) -> int:
    args = parse_args(argv)
    if configure_logging:
        from memwal_mcp.logs import setup_logging

        setup_logging(args.log_level)
        logging.getLogger("benchmarks").setLevel(logging.INFO)
    report = asyncio.run(run(args))
    print(format_report(report), file=sys.stdout)
    text = json.dumps(report, indent=2)
    if args.json_out is not None:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(text + "\n", encoding="utf-8")
        log.info("wrote %s", args.json_out)
    else:
        print("", file=sys.stdout)
        print(text, file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
