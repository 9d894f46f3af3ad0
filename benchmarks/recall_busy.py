"""Recall latency while the lane it searches is being scanned in the background.

    python -m benchmarks.recall_busy --db FILE [--memories 1920] [--queries 120]

FILE is a database filled by `benchmarks.speed --db FILE`. The newest `--memories` of its
lane are put back on the deferred-nominations list, as if curation without an LLM had just
made them, and the worker's counting passes (memwal_mcp/curation/deferred.py) scan the lane
for their nominees -- the same scan as a nomination with an LLM -- while recalls run one
after another. Prints recall p50 / p90 with the lane idle and during the scans. The
counting bumps the file's curation counters again: use a copy of a kept database.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import speed_data
from .metrics import percentile
from .speed_fill import count_deferred

NAMESPACE = "default"


def _defer_newest(conn: sqlite3.Connection, lane: int, count: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO deferred_nominations (memory_rowid, lane_id, job_id)"
        " SELECT rowid, lane_id, source_job_id FROM memories WHERE lane_id = ? AND status = 'live'"
        " ORDER BY rowid DESC LIMIT ?",
        (lane, count),
    )


async def run(db_path: Path, memories: int, queries: int) -> str:
    from memwal_mcp.config import load_settings
    from memwal_mcp.service import MemoryService
    from memwal_mcp.store.sqlite import jobs as job_store
    from memwal_mcp.store.sqlite.backend import SQLiteStore
    from memwal_mcp.store.sqlite.database import transaction

    settings = load_settings(db_path=db_path)
    service = MemoryService(settings)
    texts = speed_data.queries(11, 1_000_000, queries)
    async with service.running(worker=False):
        store = service.store
        if not isinstance(store, SQLiteStore):  # it fakes a backlog of nominations in SQLite's own tables
            raise SystemExit("recall_busy measures the SQLite backend: run it with MEMWAL_DB_PATH, not a database URL")
        owner = settings.owner
        lane = await store.db.read(job_store.lane_id, owner, NAMESPACE)
        if lane is None:
            raise SystemExit(f"{db_path} has no lane {owner}/{NAMESPACE}: fill it with benchmarks.speed --db first")
        await service.recall(owner, "warm-up: load the model and the lane", limit=10)

        idle = []
        for query in texts[: queries // 3]:
            started = time.perf_counter()
            await service.recall(owner, query, limit=10)
            idle.append((time.perf_counter() - started) * 1000)

        def defer(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _defer_newest(conn, lane, memories)

        await store.db.write(defer)
        counting = asyncio.get_running_loop().create_task(count_deferred(service))
        busy = []
        for query in texts[queries // 3 :]:
            if counting.done():
                break
            started = time.perf_counter()
            await service.recall(owner, query, limit=10)
            busy.append((time.perf_counter() - started) * 1000)
        counted, counting_s = await counting
        size = await store.db.read(
            lambda conn: conn.execute("SELECT live_count FROM lanes WHERE id = ?", (lane,)).fetchone()[0]
        )

    lines = [
        f"recall beside a background scan of its lane ({size:,} live memories, {db_path})",
        _latency_line("idle:", idle),
    ]
    if busy:
        lines.append(_latency_line("during scans:", busy))
    lines.append(f"scans: nominees of {counted:,} memories counted in {counting_s:.1f} s")
    return "\n".join(lines)


def _latency_line(label: str, values: Sequence[float]) -> str:
    return (
        f"{label:<14}p50 {percentile(values, 50):7.1f} ms  p90 {percentile(values, 90):7.1f} ms"
        f"  ({len(values)} recalls)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall_busy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a database filled by benchmarks.speed --db")
    parser.add_argument("--memories", type=int, default=1920, help="newest memories whose nominees are counted")
    parser.add_argument("--queries", type=int, default=120, help="recalls in all (a third of them idle)")
    args = parser.parse_args(argv)
    if not args.db.exists():
        parser.error(f"{args.db} does not exist")
    from memwal_mcp.logs import setup_logging

    setup_logging("WARNING")
    print(asyncio.run(run(args.db, args.memories, args.queries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
