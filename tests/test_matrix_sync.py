"""The in-memory vector matrix stays in step with writes from other processes on the same file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memwal_mcp.service import MemoryService

pytestmark = pytest.mark.slow

MEMWAL = Path(sys.executable).parent / "memwal-mcp"


def _cli(db: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    env["MEMWAL_DB_PATH"] = str(db)
    done = subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_dense_recall_sees_what_another_process_remembered_and_forgot(make_settings, embedder):
    settings = make_settings(recall={"mode": "dense"})
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", "The office plant needs water on Mondays")
        await svc.worker.run_once()
        before = await svc.recall("local", "espresso machine descaling", limit=5)  # loads the lane's matrix
        assert [h.text for h in before.hits] == ["The office plant needs water on Mondays"]

        # Waits up to 30 s, the most allowed (the default 10 s ran out once under a loaded CI: a cold model load
        # and the embedding in a process of its own); it returns as soon as the job is done.
        fact = "Descale the espresso machine every second Friday"
        out = _cli(settings.db_path, "remember", fact, "--json", "--wait-ms", "30000")
        assert '"status": "done"' in out
        after = await svc.recall("local", "espresso machine descaling", limit=5)
        assert after.hits[0].text == "Descale the espresso machine every second Friday"
        assert not after.hits[0].pending

        _cli(settings.db_path, "forget", after.hits[0].id)
        gone = await svc.recall("local", "espresso machine descaling", limit=5)
        assert [h.text for h in gone.hits] == ["The office plant needs water on Mondays"]
