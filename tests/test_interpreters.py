"""memwal-mcp works whether or not the interpreter's own sqlite3 can load extensions.

This machine's default python3 cannot (the store falls back to sqlean-py; the rest of
the suite runs on it). Here the CLI runs under another CPython of the same version
whose sqlite3 can, reusing this venv's installed packages, and must pick that sqlite3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_PROBE = "import sqlite3; c = sqlite3.connect(':memory:'); c.enable_load_extension(True); print('ok')"


def _python_that_loads_extensions() -> str | None:
    """Another interpreter with our major.minor (so this venv's compiled wheels fit)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in {f"/usr/bin/{version}", f"/usr/local/bin/{version}", shutil.which(version) or ""}:
        if not candidate or not os.path.exists(candidate):
            continue
        if Path(candidate).resolve() == Path(sys.executable).resolve():
            continue
        probe = subprocess.run([candidate, "-c", _PROBE], capture_output=True, text=True, timeout=30)
        if probe.stdout.strip() == "ok":
            return candidate
    return None


def test_this_interpreter_uses_a_sqlite_that_loads_sqlite_vec():
    from memwal_mcp.store.sqlite.connection import sqlite_module

    module = sqlite_module()
    conn = module.connect(":memory:")
    from memwal_mcp.store.sqlite.connection import _load_vec

    _load_vec(conn)
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")


@pytest.mark.slow
def test_an_interpreter_whose_sqlite3_loads_extensions_uses_it(tmp_path: Path):
    python = _python_that_loads_extensions()
    if python is None:
        pytest.skip("no other CPython of this version whose sqlite3 can load extensions")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]]),
        "PYTHONNOUSERSITE": "1",
        "MEMWAL_DB_PATH": str(tmp_path / "memwal.db"),
    }
    which = subprocess.run(
        [python, "-c", "from memwal_mcp.store.sqlite.connection import sqlite_module; print(sqlite_module().__name__)"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert which.stdout.strip() == "sqlite3", which.stderr

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([python, "-m", "memwal_mcp", *args], capture_output=True, text=True, env=env, timeout=120)

    remembered = cli("remember", "User prefers dark roast coffee")
    assert remembered.returncode == 0 and "done (created)" in remembered.stdout, remembered.stderr
    recalled = cli("recall", "coffee")
    assert recalled.returncode == 0, recalled.stderr
    assert recalled.stdout.startswith("1. [score=") and "User prefers dark roast coffee" in recalled.stdout
