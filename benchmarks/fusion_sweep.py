"""Recall quality for several fusion settings on one loaded database per set and layout.

    python -m benchmarks.fusion_sweep --data A.jsonl [--data B.jsonl@namespaces,one-lane]
        [--layout owners,namespaces] --grid 'dense_weight=0.5,0.6,0.7' [--keep DIR]

Each set is loaded once per layout (the embedding is the slow part); the defaults, every
combination of the grid's `[recall]` settings and each `--try` (settings together) then run the set's queries in hybrid mode, and dense and
lexical run once as the references. Prints R@5 / R@10 per combination, set and layout, the
mean over sets, and each combination's change against the defaults on every set (with the
largest R@5 loss), so a setting is chosen by what it does everywhere, not on one set.

`FILE@layouts` gives one set its own layouts (otherwise `--layout`). With `--keep DIR` the
loaded databases stay in DIR and a later run with the same sets reuses them instead of
embedding everything again (only valid while the code that writes memories is unchanged).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.dataset import Dataset, load_dataset
from benchmarks.retrieval import Loaded, arrange, load_memories, run_mode

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
    return [dict(combo) for combo in itertools.product(*axes)] if axes else []


def _setting_list(text: str) -> dict[str, Any]:
    return {name: _value(value) for name, _, value in (part.partition("=") for part in text.split())}


def _combos(grid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The defaults first (what every other combination is compared with), then the rest once each."""
    out: list[dict[str, Any]] = [{}]
    for combo in grid:
        if combo not in out:
            out.append(combo)
    return out


def _sets(data: Sequence[str], layouts: str) -> list[tuple[Path, str]]:
    out = []
    for spec in data:
        path, _, own = spec.partition("@")
        out += [(Path(path), layout) for layout in (own or layouts).split(",")]
    return out


async def _loaded(dataset: Dataset, db: Path, embedder: Any) -> Loaded:
    """The set loaded into `db`, or the one a previous run left there (its facts beside it)."""
    facts_file = db.with_suffix(".facts.json")
    if db.exists() and facts_file.exists():
        facts = {key: tuple(fact) if fact else None for key, fact in json.loads(facts_file.read_text()).items()}
        return Loaded(facts, 0.0, len(facts), 0, True)  # type: ignore[arg-type]  # facts are (owner, ns, text)
    for stale in (db, facts_file):
        stale.unlink(missing_ok=True)
    loaded = await load_memories(dataset, db, False, embedder, 600.0)
    facts_file.write_text(json.dumps(loaded.facts))
    return loaded


async def sweep(
    sets: Sequence[tuple[Path, str]], grid: list[dict[str, Any]], keep: Path | None, references: bool = True
) -> None:
    from memwal_mcp.config import load_settings
    from memwal_mcp.embedding import FastEmbedEmbedder

    embedder = FastEmbedEmbedder(load_settings().embedding)
    table: dict[tuple[str, str, str], tuple[float, float]] = {}
    latency: dict[str, list[float]] = {}
    try:
        for path, layout in sets:
            dataset = arrange(load_dataset(path), layout)
            with tempfile.TemporaryDirectory(prefix="memwal-sweep-") as tmp:
                where = keep or Path(tmp)
                where.mkdir(parents=True, exist_ok=True)
                db = where / f"{path.stem}-{layout}.db"
                loaded = await _loaded(dataset, db, embedder)
                runs: list[tuple[str, str, dict[str, Any]]] = (
                    [("dense", "dense", {}), ("lexical", "lexical", {})] if references else []
                )
                runs += [("hybrid " + _label(combo), "hybrid", combo) for combo in _combos(grid)]
                for label, mode, combo in runs:
                    result = await run_mode(mode, dataset, loaded, db, False, embedder, KS, combo)
                    summary = result.summary(KS)
                    table[label, path.stem, layout] = (summary["recall@5"], summary["recall@10"])
                    latency.setdefault(label, []).append(summary["latency_ms"]["p50"])
                    print(
                        f"{path.stem:<14} {layout:<10} {label:<60} {summary['recall@5']:.3f} {summary['recall@10']:.3f}"
                        f"  p50 {summary['latency_ms']['p50']:.1f} ms",
                        flush=True,
                    )
    finally:
        embedder.close()
    _report(table, latency)


def _report(table: dict[tuple[str, str, str], tuple[float, float]], latency: dict[str, list[float]]) -> None:
    labels = list(dict.fromkeys(key[0] for key in table))
    places = list(dict.fromkeys(key[1:] for key in table))
    print("\nmean over sets and layouts (R@5 / R@10, median p50 ms):")
    for label in labels:
        values = [v for key, v in table.items() if key[0] == label]
        print(
            f"  {label:<60} {statistics.mean(v[0] for v in values):.3f} {statistics.mean(v[1] for v in values):.3f}"
            f"  {statistics.median(latency[label]):.1f}"
        )
    hybrid = [label for label in labels if label.startswith("hybrid")]
    if len(hybrid) < 2:
        return
    base = hybrid[0]
    print(f"\nchange against {base!r}, R@5 / R@10 per set and layout; worst R@5 change:")
    print("  " + " " * 60 + "".join(f"{stem[:12] + '/' + layout[:3]:>18}" for stem, layout in places))
    for label in hybrid[1:]:
        deltas = [
            (table[(label, *place)][0] - table[(base, *place)][0], table[(label, *place)][1] - table[(base, *place)][1])
            for place in places
        ]
        cells = "".join(f"{f'{d5:+.3f}/{d10:+.3f}':>18}" for d5, d10 in deltas)
        print(f"  {label:<60}{cells}   worst {min(d[0] for d in deltas):+.3f}")


def _label(combo: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in combo.items()) or "defaults"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", action="append", required=True, help="FILE.jsonl, or FILE.jsonl@layout,layout")
    parser.add_argument("--layout", default="owners,namespaces")
    parser.add_argument("--grid", action="append", default=[], help="name=v1,v2,... of a [recall] setting")
    parser.add_argument("--try", dest="tries", action="append", default=[], help="'a=1 b=2': settings run together")
    parser.add_argument("--no-references", action="store_true", help="hybrid only: no dense and lexical runs")
    parser.add_argument("--keep", type=Path, help="keep the loaded databases here and reuse them next time")
    args = parser.parse_args(argv)
    asyncio.run(
        sweep(
            _sets(args.data, args.layout),
            _grid(args.grid) + [_setting_list(t) for t in args.tries],
            args.keep,
            not args.no_references,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
