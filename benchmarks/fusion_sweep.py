"""Recall quality for several fusion settings on one loaded database per set and layout.

    python -m benchmarks.fusion_sweep --data A.jsonl [--data B.jsonl] [--layout owners,namespaces]
        --grid 'dense_weight=0.5,0.6,0.7' --grid 'lexical_scale=saturation,ceiling'

Each set is loaded once per layout (the embedding is the slow part); every combination of
the grid's `[recall]` settings then runs the set's queries in hybrid mode, and dense and
lexical run once as the references. Prints R@5 / R@10 per combination, set and layout, and
the mean over sets, so a setting is chosen by what it does everywhere, not on one set.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.dataset import load_dataset
from benchmarks.retrieval import arrange, load_memories, run_mode

KS = (5, 10)


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _grid(specs: Sequence[str]) -> list[dict[str, Any]]:
    axes = []
    for spec in specs:
        name, _, values = spec.partition("=")
        axes.append([(name.strip(), _value(v.strip())) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [{}]


async def sweep(data: Sequence[Path], layouts: Sequence[str], grid: list[dict[str, Any]]) -> None:
    from memwal_mcp.config import load_settings
    from memwal_mcp.embedding import FastEmbedEmbedder

    embedder = FastEmbedEmbedder(load_settings().embedding)
    table: dict[tuple[str, str, str], tuple[float, float]] = {}
    try:
        for path in data:
            for layout in layouts:
                dataset = arrange(load_dataset(path), layout)
                with tempfile.TemporaryDirectory(prefix="memwal-sweep-") as tmp:
                    db = Path(tmp) / "sweep.db"
                    loaded = await load_memories(dataset, db, False, embedder, 600.0)
                    runs: list[tuple[str, str, dict[str, Any]]] = [("dense", "dense", {}), ("lexical", "lexical", {})]
                    runs += [("hybrid " + _label(combo), "hybrid", combo) for combo in grid]
                    for label, mode, combo in runs:
                        result = await run_mode(mode, dataset, loaded, db, False, embedder, KS, combo)
                        summary = result.summary(KS)
                        table[label, path.stem, layout] = (summary["recall@5"], summary["recall@10"])
                        print(
                            f"{path.stem:<18} {layout:<10} {label:<50} {summary['recall@5']:.3f} {summary['recall@10']:.3f}",
                            flush=True,
                        )
    finally:
        embedder.close()
    print("\nmean over sets and layouts (R@5 / R@10):")
    for label in dict.fromkeys(key[0] for key in table):
        values = [v for key, v in table.items() if key[0] == label]
        print(f"  {label:<50} {statistics.mean(v[0] for v in values):.3f} {statistics.mean(v[1] for v in values):.3f}")


def _label(combo: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in combo.items()) or "defaults"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--layout", default="owners,namespaces")
    parser.add_argument("--grid", action="append", default=[], help="name=v1,v2,... of a [recall] setting")
    args = parser.parse_args(argv)
    asyncio.run(sweep(args.data, args.layout.split(","), _grid(args.grid)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
