"""Idle recall over stdio of two or more code trees, each query sent to every tree in turn.

    python -m benchmarks.recall_ab --tree old=/path/to/old-checkout --tree new=. [--queries 400]

On this machine two runs of one tree minutes apart differ by 1-3 ms at a p50 of 13 ms (the
cores are shared), more than most changes to the idle recall. So every tree's `memwal-mcp`
runs at once, each on its own copy of one database of `speed_data` facts (made with the
real worker the first time; `--db` keeps it), and each query goes to all of them one after
the other, in alternating order: what the machine does to one query falls on every tree.
Each tree's code is put first on `PYTHONPATH` for this interpreter's `memwal-mcp`, so the
trees share the dependencies installed here. Printed: each tree's p50 and the median of the
per-query differences against the first tree. Never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import recall_profile, speed_data, speed_proc

WARM_UP = 20


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout (twice or more)")
    parser.add_argument("--memories", type=int, default=2000, help="facts in the lane (default 2000)")
    parser.add_argument("--queries", type=int, default=400, help="distinct queries (default 400)")
    parser.add_argument("--db", type=Path, help="keep the database there (made when missing, reused otherwise)")
    args = parser.parse_args(argv)
    if len(args.tree) < 2 or any("=" not in tree for tree in args.tree):
        parser.error("give --tree NAME=PATH at least twice")
    return args


async def compare(trees: list[tuple[str, Path]], db: Path, memories: int, count: int, workdir: Path) -> str:
    queries = speed_data.queries(recall_profile.SEED, memories, count + WARM_UP)
    calls: list[list[float]] = [[] for _ in trees]
    async with contextlib.AsyncExitStack() as stack:
        sessions: list[Any] = []
        for name, tree in trees:
            copy = workdir / f"{name}.db"
            shutil.copy(db, copy)
            env = speed_proc.server_env(copy)
            env["PYTHONPATH"] = str(tree.resolve())
            session, _ = await stack.enter_async_context(
                speed_proc.stdio_session([str(speed_proc.MEMWAL)], env, workdir / f"{name}.stderr.log")
            )
            sessions.append(session)
        for index, query in enumerate(queries):
            order = list(range(len(sessions)))
            if index % 2:
                order.reverse()
            for i in order:
                begun = time.perf_counter()
                await speed_proc._call(sessions[i], "memwal_recall", {"query": query, "limit": recall_profile.LIMIT})
                if index >= WARM_UP:
                    calls[i].append((time.perf_counter() - begun) * 1000)
    lines = [f"idle recall over stdio at {memories:,} memories, limit {recall_profile.LIMIT}, {count} queries:"]
    for (name, _), ms in zip(trees, calls):
        paired = statistics.median(a - b for a, b in zip(ms, calls[0]))
        lines.append(f"  {name:<12} p50 {statistics.median(ms):7.2f} ms  per query vs {trees[0][0]}: {paired:+.2f} ms")
    lines.append(f"machine: load average {speed_proc.loadavg()} at the end")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> int:
    trees = [(name, Path(path)) for name, _, path in (tree.partition("=") for tree in args.tree)]
    with tempfile.TemporaryDirectory(prefix="memwal-recall-ab-") as scratch:
        db = args.db or Path(scratch) / "memwal.db"
        if not db.exists():
            await recall_profile.fill(db, args.memories)
        print(await compare(trees, db, args.memories, args.queries, Path(scratch)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
