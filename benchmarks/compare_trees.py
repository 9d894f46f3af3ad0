"""The speed benchmark on two checkouts side by side: is a change as fast as the code before it?

    python -m benchmarks.compare_trees --old /path/to/old-checkout [--new .] [--rounds 2] [-- speed args]

Each checkout runs its own `benchmarks.speed` with its own interpreter (`.venv/bin/python`
inside it, or `--old-python`/`--new-python`), on a fresh database, the runs interleaved
old, new, old, new... so drift in the machine's load falls on both. Printed: the median over
rounds of each figure for each tree and the ratio new / old (below 1 is faster for a latency,
above 1 is faster for a throughput). Arguments after `--` go to both speed runs (default:
`--memories 10000 --skip cold --skip probe`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DEFAULT_SPEED_ARGS = ["--memories", "10000", "--skip", "cold", "--skip", "probe"]

# (label, path into one size's result, True when higher is better)
FIGURES: list[tuple[str, Callable[[dict[str, Any]], float | None], bool]] = [
    ("recall p50 ms, in-process hybrid", lambda r: r["recall"]["latency_ms"]["hybrid"]["p50"], False),
    ("recall p50 ms, stdio hybrid", lambda r: r["recall"]["latency_ms"].get("stdio_hybrid", {}).get("p50"), False),
    ("remember p50 ms, in-process", lambda r: r["remember_ms"]["in_process"]["p50"], False),
    ("remember p50 ms, stdio", lambda r: r["remember_ms"].get("stdio", {}).get("p50"), False),
    ("curation jobs/s (real worker)", lambda r: r["fill"]["curation_per_s"], True),
    ("cold start to tools/list ms", lambda r: r.get("cold_start_ms", {}).get("memwal", {}).get("p50"), False),
    ("peak RSS MiB, stdio server", lambda r: (r["rss_bytes"].get("stdio_server") or 0) / 2**20 or None, False),
]


def _python(tree: Path, given: str | None) -> str:
    return given or str(tree / ".venv" / "bin" / "python")


def _run(python: str, tree: Path, speed_args: Sequence[str], out: Path) -> dict[str, Any]:
    command = [python, "-m", "benchmarks.speed", *speed_args, "--json-out", str(out)]
    print(f"running in {tree}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    subprocess.run(command, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def _figure(result: dict[str, Any], pick: Callable[[dict[str, Any]], float | None]) -> float | None:
    try:
        return pick(result["results"][-1])
    except (KeyError, IndexError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    speed_args = DEFAULT_SPEED_ARGS
    if "--" in argv:
        split = argv.index("--")
        argv, speed_args = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the checkout to compare against")
    parser.add_argument("--new", type=Path, default=Path("."), help="the checkout under test (default: here)")
    parser.add_argument("--old-python", help="interpreter for --old (default: its .venv/bin/python)")
    parser.add_argument("--new-python", help="interpreter for --new (default: its .venv/bin/python)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per tree, interleaved (default 2)")
    args = parser.parse_args(argv)
    old, new = args.old.resolve(), args.new.resolve()
    trees = {"old": (old, _python(old, args.old_python)), "new": (new, _python(new, args.new_python))}
    results: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="memwal-compare-") as scratch:
        for round_no in range(args.rounds):
            for name in ("old", "new"):
                tree, python = trees[name]
                out = Path(scratch) / f"{name}-{round_no}.json"
                results[name].append(_run(python, tree, speed_args, out))
    print(f"speed, {args.rounds} interleaved rounds per tree ({' '.join(speed_args)})")
    print(f"  old: {trees['old'][0]}\n  new: {trees['new'][0]}")
    print(f"{'figure':<36} {'old':>9} {'new':>9} {'new/old':>8}   each round (old | new)")
    for label, pick, higher_better in FIGURES:
        rounds = {name: [v for v in (_figure(r, pick) for r in results[name]) if v is not None] for name in results}
        before = statistics.median(rounds["old"]) if rounds["old"] else None
        after = statistics.median(rounds["new"]) if rounds["new"] else None
        ratio = f"{after / before:8.3f}" if before and after is not None else f"{'n/a':>8}"
        shown = [f"{v:>9.2f}" if v is not None else f"{'n/a':>9}" for v in (before, after)]
        each = " ".join(f"{v:.1f}" for v in rounds["old"]) + " | " + " ".join(f"{v:.1f}" for v in rounds["new"])
        note = " (higher is better)" if higher_better else ""
        print(f"{label:<36} {shown[0]} {shown[1]} {ratio}   {each}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
