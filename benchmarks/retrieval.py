"""Retrieval-quality benchmark: recall@k, nDCG@k and recall latency per search mode.

    python -m benchmarks.retrieval --data benchmarks/data/dev.jsonl
    python -m benchmarks.retrieval --data FILE.jsonl --k 1,5,10,25 --mode dense --mode hybrid \
        --curation on --json-out results.json

Every memory goes through the real remember path (a job per line, the curation
worker folds it into a memory) into a fresh database; every query goes through
the real recall path of one MemoryService per mode over that same database
file. The table goes to stdout (followed by the JSON, unless --json-out names a
file for it); logs go to stderr.

Matching hits to evidence: a dataset memory id maps to its job, the job to the
memwal memory it became, and that memory to its fact = (owner, namespace,
normalized text). A hit counts for every dataset id whose fact it is, so
duplicates folded at write time (curation on) or collapsed at read time
(curation off) are credited to each of their dataset ids.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .dataset import Dataset, DatasetError, Query, load_dataset
from .metrics import mean, ndcg_at_k, percentile, recall_at_k

log = logging.getLogger("benchmarks.retrieval")

MODES = ("dense", "lexical", "hybrid")
LAYOUTS = ("owners", "namespaces", "one-lane")
DEFAULT_K = (1, 5, 10, 25)
MAX_K = 100  # memwal_recall's largest limit
STATUS_CHUNK = 50  # memwal_remember_status takes at most 50 job ids
STATUS_WAIT_MS = 10_000

Fact = tuple[str, str, str]  # (owner, namespace, normalized text)


# --- arguments -------------------------------------------------------------------


def _comma_list(values: Sequence[str] | None) -> list[str]:
    items: list[str] = []
    for value in values or ():
        items.extend(part.strip() for part in value.split(",") if part.strip())
    return items


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.retrieval",
        description="Measure memwal-mcp recall quality (recall@k, nDCG@k) and latency on a JSONL dataset.",
    )
    parser.add_argument("--data", type=Path, required=True, help="JSONL file of memory and query lines")
    parser.add_argument(
        "--k", action="append", metavar="K[,K...]", help=f"cut-offs (default {','.join(map(str, DEFAULT_K))})"
    )
    parser.add_argument(
        "--mode", action="append", metavar="MODE[,MODE...]", help="dense, lexical, hybrid (repeatable; default all)"
    )
    parser.add_argument(
        "--curation", choices=("on", "off"), default="off", help="fold duplicates on write (default off)"
    )
    parser.add_argument("--json-out", type=Path, help="write the JSON here instead of after the table on stdout")
    parser.add_argument("--db", type=Path, help="keep the database at this path (must not exist); default: temp dir")
    layout = parser.add_mutually_exclusive_group()
    layout.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="owners",
        help="owners: one owner per conversation unit (the file's owner field; default); "
        "namespaces: one owner, each unit in its own namespace, each query recalled in its unit's; "
        "one-lane: every memory and query in one lane of one owner",
    )
    layout.add_argument(
        "--one-owner",
        dest="layout",
        action="store_const",
        const="one-lane",
        help="the same as --layout one-lane",
    )
    parser.add_argument("--by-category", action="store_true", help="also print recall@k per query category")
    parser.add_argument(
        "--via",
        choices=("service", "stdio"),
        default="service",
        help="run the queries in-process through MemoryService (default), or as memwal_recall tool "
        "calls through the mcp client to memwal-mcp over stdio, one server per owner",
    )
    parser.add_argument("--per-query", action="store_true", help="include each query's ranks and scores in the JSON")
    parser.add_argument("--load-timeout", type=float, default=900.0, help="seconds to wait for curation (default 900)")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="level for memwal's own logs on stderr (the benchmark's progress is always shown)",
    )
    args = parser.parse_args(argv)

    try:
        ks = sorted({int(k) for k in _comma_list(args.k)} or set(DEFAULT_K))
    except ValueError:
        parser.error("--k takes integers, e.g. --k 1,5,10")
    if ks[0] < 1 or ks[-1] > MAX_K:
        parser.error(f"--k values must be within 1..{MAX_K}")
    args.ks = ks

    modes = list(dict.fromkeys(m.lower() for m in _comma_list(args.mode))) or list(MODES)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown --mode {', '.join(unknown)}; choose from {', '.join(MODES)}")
    args.modes = modes
    if args.db is not None and args.db.exists():
        parser.error(f"--db {args.db} exists; the benchmark needs a fresh database")
    return args


# --- loading -------------------------------------------------------------------------


@dataclass
class Loaded:
    facts: dict[str, Fact | None]  # dataset memory id -> fact (None: its job failed)
    seconds: float
    jobs: int
    failed: int
    occurred_at_passed: bool
    decisions: dict[str, int] = field(default_factory=dict)


def _settings(db_path: Path, curation: bool, mode: str | None = None, recall: dict[str, Any] | None = None):
    from memwal_mcp.config import load_settings

    overrides: dict[str, Any] = {"db_path": db_path, "curation": {"enabled": curation}}
    if mode is not None or recall:
        overrides["recall"] = {**(recall or {}), **({"mode": mode} if mode is not None else {})}
    return load_settings(**overrides)


def mode_supported(settings: Any) -> bool:
    return "mode" in type(settings.recall).model_fields


async def load_memories(dataset: Dataset, db_path: Path, curation: bool, embedder: Any, timeout_s: float) -> Loaded:
    """Remember every memory through the real path, wait for the worker, map dataset ids to facts."""
    from memwal_mcp.normalize import normalize_text
    from memwal_mcp.service import MemoryService

    service = MemoryService(_settings(db_path, curation), embedder=embedder)
    takes_occurred_at = "occurred_at" in inspect.signature(service.remember).parameters
    if not takes_occurred_at and any(m.occurred_at for m in dataset.memories):
        log.warning("this memwal build's remember() takes no occurred_at; the timestamps in the data are not stored")

    started = time.perf_counter()
    async with service.running(worker=True):
        job_of: dict[str, str] = {}
        for memory in dataset.memories:
            extra = {"occurred_at": memory.occurred_at} if takes_occurred_at and memory.occurred_at else {}
            outcome = await service.remember(memory.owner, memory.text, namespace=memory.namespace, **extra)
            job_of[memory.id] = outcome.job.id
        log.info("queued %d remember jobs; waiting for the curation worker", len(job_of))

        by_owner: dict[str, list[str]] = defaultdict(list)
        for memory in dataset.memories:
            by_owner[memory.owner].append(job_of[memory.id])
        jobs: dict[str, Any] = {}
        deadline = time.monotonic() + timeout_s
        for owner, job_ids in by_owner.items():
            for start in range(0, len(job_ids), STATUS_CHUNK):
                chunk = job_ids[start : start + STATUS_CHUNK]
                while True:
                    found = await service.status(owner, chunk, wait_ms=STATUS_WAIT_MS)
                    if all(job.status != "queued" for job in found):
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"curation did not finish within {timeout_s:.0f} s")
                jobs.update((job.id, job) for job in found)
        seconds = time.perf_counter() - started

        decisions: dict[str, int] = defaultdict(int)
        failed = 0
        body_of: dict[tuple[str, str], Fact | None] = {}
        facts: dict[str, Fact | None] = {}
        for memory in dataset.memories:
            job = jobs[job_of[memory.id]]
            decisions[job.decision or job.status] += 1
            if job.status != "done" or not job.memory_id:
                failed += 1
                log.warning("memory %s: remember job %s %s: %s", memory.id, job.id, job.status, job.error)
                facts[memory.id] = None
                continue
            place = (memory.owner, job.memory_id)
            if place not in body_of:
                body_of[place] = await _current_fact(service, memory.owner, job.memory_id, normalize_text)
            facts[memory.id] = body_of[place]
    distinct = len({fact for fact in facts.values() if fact is not None})
    log.info("loaded %d memories as %d distinct facts in %.1f s (%d failed)", len(facts), distinct, seconds, failed)
    return Loaded(facts, seconds, len(job_of), failed, takes_occurred_at, dict(decisions))


async def _current_fact(service: Any, owner: str, memory_id: str, normalize) -> Fact | None:
    """The fact a memory stands for now, following retirements (consolidated into another memory)."""
    from memwal_mcp.errors import NotFound

    for _ in range(32):
        try:
            history = await service.history(owner, memory_id)
        except NotFound:
            return None
        if history.status == "live" or not history.retired_into:
            return (owner, history.namespace, normalize(history.body))
        memory_id = history.retired_into
    return None


# --- querying ----------------------------------------------------------------------------


@dataclass
class QueryOutcome:
    query: Query
    ranked: list[Fact]
    scores: list[float]
    latency_ms: float
    recall: dict[int, float]
    ndcg: dict[int, float]


@dataclass
class ModeResult:
    mode: str
    outcomes: list[QueryOutcome]

    def summary(self, ks: Sequence[int]) -> dict[str, Any]:
        out = _aggregate(self.outcomes, ks)
        latencies = [o.latency_ms for o in self.outcomes]
        out["latency_ms"] = {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
            "mean": round(mean(latencies), 2),
        }
        categories: dict[str, list[QueryOutcome]] = defaultdict(list)
        for outcome in self.outcomes:
            if outcome.query.category:
                categories[outcome.query.category].append(outcome)
        if categories:
            out["by_category"] = {name: _aggregate(items, ks) for name, items in sorted(categories.items())}
        return out


def _aggregate(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"queries": len(outcomes)}
    for k in ks:
        out[f"recall@{k}"] = round(mean([o.recall[k] for o in outcomes]), 4)
    for k in ks:
        out[f"ndcg@{k}"] = round(mean([o.ndcg[k] for o in outcomes]), 4)
    return out


def _clear_query_cache(embedder: Any) -> None:
    # The embedder caches query vectors; a mode run after another would otherwise get
    # its query embeddings for free and report a flattering latency.
    cache = getattr(embedder, "_query_cache", None)
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()


async def run_mode(
    mode: str,
    dataset: Dataset,
    loaded: Loaded,
    db_path: Path,
    curation: bool,
    embedder: Any,
    ks: Sequence[int],
    recall: dict[str, Any] | None = None,
) -> ModeResult:
    from memwal_mcp.normalize import normalize_text
    from memwal_mcp.service import MemoryService

    limit = max(ks)
    service = MemoryService(_settings(db_path, curation, mode, recall), embedder=embedder)
    outcomes: list[QueryOutcome] = []
    async with service.running(worker=False):
        first = dataset.queries[0]
        await service.recall(first.owner, "warm-up query", limit=limit, namespace=first.namespace)
        _clear_query_cache(embedder)
        for query in dataset.queries:
            started = time.perf_counter()
            result = await service.recall(query.owner, query.query, limit=limit, namespace=query.namespace)
            latency_ms = (time.perf_counter() - started) * 1000
            hits = [(hit.namespace, hit.text, hit.score) for hit in result.hits]
            outcomes.append(_outcome(query, hits, latency_ms, loaded, ks, normalize_text))
    log.info("mode %s: %d queries done", mode, len(outcomes))
    return ModeResult(mode, outcomes)


async def run_mode_over_stdio(
    mode: str, dataset: Dataset, loaded: Loaded, db_path: Path, ks: Sequence[int]
) -> ModeResult:
    """The same queries as `run_mode`, as `memwal_recall` calls through the mcp client (--via stdio)."""
    from memwal_mcp.normalize import normalize_text

    from .retrieval_mcp import recall_over_stdio

    answers = await recall_over_stdio(db_path, mode, dataset.queries, max(ks), db_path.with_suffix(".stderr.log"))
    outcomes = [
        _outcome(query, hits, latency_ms, loaded, ks, normalize_text)
        for query, (hits, latency_ms) in zip(dataset.queries, answers)
    ]
    log.info("mode %s over stdio: %d queries done", mode, len(outcomes))
    return ModeResult(mode, outcomes)


def _outcome(
    query: Query,
    hits: Sequence[tuple[str, str, float]],
    latency_ms: float,
    loaded: Loaded,
    ks: Sequence[int],
    normalize,
) -> QueryOutcome:
    """Score one query's hits -- (namespace, text, score), best first -- against its evidence."""
    ranked: list[Fact] = [(query.owner, namespace, normalize(text)) for namespace, text, _ in hits]
    resolve = loaded.facts.get
    return QueryOutcome(
        query,
        ranked,
        [score for _, _, score in hits],
        latency_ms,
        {k: recall_at_k(ranked, query.evidence, k, resolve) for k in ks},
        {k: ndcg_at_k(ranked, query.evidence, k, resolve) for k in ks},
    )


# --- reporting ------------------------------------------------------------------------------


def format_table(summaries: dict[str, dict[str, Any]], ks: Sequence[int]) -> str:
    columns = [f"R@{k}" for k in ks] + [f"nDCG@{k}" for k in ks] + ["p50 ms", "p95 ms"]
    width = max(8, *(len(c) + 1 for c in columns))
    lines = [f"{'mode':<9}" + "".join(f"{c:>{width}}" for c in columns)]
    for mode, s in summaries.items():
        cells = [f"{s[f'recall@{k}']:.3f}" for k in ks] + [f"{s[f'ndcg@{k}']:.3f}" for k in ks]
        cells += [f"{s['latency_ms']['p50']:.1f}", f"{s['latency_ms']['p95']:.1f}"]
        lines.append(f"{mode:<9}" + "".join(f"{c:>{width}}" for c in cells))
    return "\n".join(lines)


def format_categories(summaries: dict[str, dict[str, Any]], ks: Sequence[int]) -> str:
    names = sorted({name for s in summaries.values() for name in s.get("by_category", {})})
    if not names:
        return "(no query carries a category)"
    label = max(len("category"), *(len(n) for n in names)) + 2
    lines = []
    for k in ks:
        lines.append(f"{f'recall@{k}':<{label}}{'n':>5}" + "".join(f"{mode:>9}" for mode in summaries))
        for name in names:
            row = [summaries[mode].get("by_category", {}).get(name) for mode in summaries]
            count = next((r["queries"] for r in row if r), 0)
            cells = "".join(f"{r[f'recall@{k}']:>9.3f}" if r else f"{'-':>9}" for r in row)
            lines.append(f"{name:<{label}}{count:>5}" + cells)
        lines.append("")
    return "\n".join(lines).rstrip()


def _per_query(result: ModeResult, ks: Sequence[int], facts: dict[str, Fact | None]) -> list[dict[str, Any]]:
    rows = []
    for o in result.outcomes:
        ranks = {}
        for item in o.query.evidence:
            fact = facts.get(item)
            ranks[item] = o.ranked.index(fact) + 1 if fact in o.ranked else None
        rows.append(
            {
                "id": o.query.id,
                "owner": o.query.owner,
                "query": o.query.query,
                "category": o.query.category,
                "evidence_rank": ranks,
                "top_score": round(o.scores[0], 4) if o.scores else None,
                "top_hits": [fact[2] for fact in o.ranked[:3]],  # normalized text of the best three
                "latency_ms": round(o.latency_ms, 2),
                **{f"recall@{k}": round(o.recall[k], 4) for k in ks},
                **{f"ndcg@{k}": round(o.ndcg[k], 4) for k in ks},
            }
        )
    return rows


# --- main -------------------------------------------------------------------------------------


def arrange(dataset: Dataset, layout: str) -> Dataset:
    """The dataset as `layout` places it. Both loading and querying (in-process or over stdio)
    see only the arranged owners and namespaces, so every path honours the layout."""
    if layout == "one-lane":
        return dataset.as_one_owner()
    if layout == "namespaces":
        return dataset.as_namespaces()
    return dataset


async def run(args: argparse.Namespace, embedder: Any = None) -> dict[str, Any]:
    dataset = arrange(load_dataset(args.data), args.layout)
    curation = args.curation == "on"
    owners = dataset.owners
    log.info(
        "%s: %d memories, %d owners, %d queries", args.data, len(dataset.memories), len(owners), len(dataset.queries)
    )

    probe = _settings(args.db or Path("unused.db"), curation, args.modes[0])
    supported = mode_supported(probe)
    if not supported:
        log.warning("this memwal build has no recall.mode setting: every mode runs the default search")
    owned = None
    if embedder is None and probe.embedding.enabled:
        from memwal_mcp.embedding import FastEmbedEmbedder

        embedder = owned = FastEmbedEmbedder(probe.embedding)

    try:
        with tempfile.TemporaryDirectory(prefix="memwal-bench-") as tmp:
            db_path = args.db or Path(tmp) / "bench.db"
            loaded = await load_memories(dataset, db_path, curation, embedder, args.load_timeout)
            if args.via == "stdio":
                results = [await run_mode_over_stdio(m, dataset, loaded, db_path, args.ks) for m in args.modes]
            else:
                results = [await run_mode(m, dataset, loaded, db_path, curation, embedder, args.ks) for m in args.modes]
    finally:
        if owned is not None:
            owned.close()  # its background copies: ONNX Runtime aborts an exit with them running

    summaries = {r.mode: r.summary(args.ks) for r in results}
    namespaces = {(m.owner, m.namespace or "default") for m in dataset.memories}
    report: dict[str, Any] = {
        "dataset": str(args.data),
        "memories": len(dataset.memories),
        "layout": args.layout,
        "owners": len(owners),
        "lanes": len(namespaces),
        "queries": len(dataset.queries),
        "curation": args.curation,
        "via": args.via,
        "k": list(args.ks),
        "modes": list(args.modes),
        "mode_setting_supported": supported,
        "load": {
            "seconds": round(loaded.seconds, 2),
            "jobs": loaded.jobs,
            "failed": loaded.failed,
            "distinct_facts": len({f for f in loaded.facts.values() if f is not None}),
            "occurred_at_passed": loaded.occurred_at_passed,
            "decisions": loaded.decisions,
        },
        "results": summaries,
    }
    if args.per_query:
        report["per_query"] = {r.mode: _per_query(r, args.ks, loaded.facts) for r in results}
    return report


def main(argv: Sequence[str] | None = None, embedder: Any = None, *, configure_logging: bool = True) -> int:
    """Run the benchmark and print the figures.

    `embedder` lets a caller (a test) share an already loaded model;
    `configure_logging=False` leaves the process's logging setup alone (under pytest).
    """
    args = parse_args(argv)
    if configure_logging:
        from memwal_mcp.logs import setup_logging

        setup_logging(args.log_level)
        logging.getLogger("benchmarks").setLevel(logging.INFO)
    try:
        report = asyncio.run(run(args, embedder))
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    out = sys.stdout
    print(
        f"{report['dataset']}: {report['memories']} memories, {report['owners']} owners, "
        f"{report['queries']} queries; layout {report['layout']}, {report['lanes']} lanes; curation {report['curation']}"
        + (f"; queries as memwal_recall calls over {report['via']}" if report["via"] != "service" else "")
        + ("" if report["mode_setting_supported"] else "; WARNING: recall.mode unsupported, modes are identical"),
        file=out,
    )
    print(format_table(report["results"], args.ks), file=out)
    if args.by_category:
        print("", file=out)
        print(format_categories(report["results"], args.ks), file=out)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.json_out is not None:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(text + "\n", encoding="utf-8")
        log.info("wrote %s", args.json_out)
    else:
        print("", file=out)
        print(text, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
