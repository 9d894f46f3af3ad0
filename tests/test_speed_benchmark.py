"""The speed benchmark runs end to end at a tiny size, and continues a database it left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import speed

pytestmark = pytest.mark.slow

SMALL = [
    "--queries",
    "3",
    "--remembers",
    "3",
    "--raw-max",
    "10",
    "--fill",
    "direct",
    "--curate-sample",
    "10",
    "--skip",
    "cold",
    "--skip",
    "stdio",
    "--skip",
    "probe",
]


def _run(tmp_path: Path, name: str, *args: str) -> dict:
    out = tmp_path / f"{name}.json"
    assert speed.main([*SMALL, *args, "--json-out", str(out)], configure_logging=False) == 0
    return json.loads(out.read_text())


def test_a_kept_database_is_continued_not_refilled(tmp_path: Path) -> None:
    db = tmp_path / "speed.db"
    first = _run(tmp_path, "first", "--memories", "40", "--db", str(db))
    fill = first["results"][0]["fill"]
    assert fill["live_memories"] == 40 and fill["curated_by_worker"] == 10
    assert first["results"][0]["recall"]["overlap_at_10"] == 1.0

    second = _run(tmp_path, "second", "--memories", "40,60", "--db", str(db))
    assert "continued" in second["database"]
    held, grown = second["results"]
    assert held["fill"]["added"] == 0 and held["fill"]["live_memories"] == 40
    assert grown["fill"]["added"] == 20 and grown["fill"]["live_memories"] == 60
    verdicts = {t["target"]: t["verdict"] for t in held["targets"]}
    assert verdicts["curation / raw fastembed (throughput)"] == "n/a"  # nothing was curated to time
