"""`memwal-mcp import` refuses a file whose JSON nests past the interpreter's limit or holds a number too
long to convert with a one-line error naming the line, as for any malformed line; nothing is stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memwal_mcp.store.sqlite.connection import connect

pytestmark = pytest.mark.slow

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
DEEP = '{"type": "job", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
LONG_NUMBER = '{"type": "job", "x": ' + "9" * 5_000 + "}"


def cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")} | {"MEMWAL_DB_PATH": str(db)}
    return subprocess.run([str(MEMWAL), *args], capture_output=True, text=True, env=env, timeout=180)


@pytest.mark.parametrize(
    ("first", "second", "named"),
    [
        (DEEP, None, "cannot tell what"),  # the first line decides the format
        ("HEADER", DEEP, "line 2: JSON nested too deeply"),
        ("HEADER", LONG_NUMBER, "line 2: not valid JSON"),
    ],
    ids=["deep first line", "deep record", "long number"],
)
def test_hostile_json_lines_are_refused_in_one_line(tmp_path: Path, first: str, second: str | None, named: str) -> None:
    db = tmp_path / "memwal.db"
    exported = tmp_path / "empty.jsonl"
    assert cli("export", str(exported), db=db).returncode == 0
    header = exported.read_text().splitlines()[0]
    source = tmp_path / "hostile.jsonl"
    source.write_text("\n".join(header if line == "HEADER" else line for line in (first, second) if line) + "\n")
    done = cli("import", str(source), db=db)
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert named in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    conn = connect(db)
    try:
        assert conn.execute("SELECT COUNT(*) FROM remember_jobs").fetchone()[0] == 0
    finally:
        conn.close()
