"""Curation's CPU work runs at low priority, so tool calls get the cores first (Linux)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from memwal_mcp.priority import BACKGROUND_NICE, run_in_background
from memwal_mcp.service import MemoryService
from memwal_mcp.store import matrix

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities are set on Linux only")


def _my_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_background_work_runs_niced_and_hands_back_its_result_or_error() -> None:
    before = _my_nice()
    assert run_in_background(lambda a, b: (a + b, _my_nice()), 2, 3) == (5, max(BACKGROUND_NICE, before))
    assert _my_nice() == before  # the caller keeps its priority
    with pytest.raises(ZeroDivisionError):
        run_in_background(lambda: 1 / 0)


async def test_the_nomination_scan_runs_at_low_priority(make_settings, embedder, monkeypatch) -> None:
    seen: list[int] = []
    real = matrix.nearest_many_in

    def spy(*args, **kwargs):
        seen.append(_my_nice())
        return real(*args, **kwargs)

    monkeypatch.setattr(matrix, "nearest_many_in", spy)
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running():
        for text in ("User prefers dark roast coffee", "User likes dark roast coffee best"):
            assert (await svc.remember("local", text, wait_ms=15000)).job.status == "done"
    assert seen and min(seen) >= BACKGROUND_NICE
