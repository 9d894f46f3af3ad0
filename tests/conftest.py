"""Shared fixtures: a real SQLite file in tmp_path, the real bundled embedding model."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memwal_mcp.config import EmbeddingSettings, Settings, load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService
from tests.environment import isolate


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` starts one worker more than there are cores: a third of this suite's time is spent
    waiting (memwal-mcp subprocesses starting, servers and sockets, PostgreSQL, fsync), which
    one worker per core leaves idle. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's config or data dir, or inherits MEMWAL_* settings."""
    isolate(monkeypatch, tmp_path)


@pytest.fixture(scope="session")
def embedder() -> Iterator[FastEmbedEmbedder]:
    """The real default model, loaded once per test session (closed at the end: ONNX Runtime
    aborts an interpreter exit while the background copies run)."""
    model = FastEmbedEmbedder(EmbeddingSettings())
    yield model
    model.close()


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        overrides.setdefault("db_path", tmp_path / "memwal.db")
        return load_settings(**overrides)

    return make


@pytest.fixture
async def service(make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder) -> AsyncIterator[MemoryService]:
    """A running service (store + worker) on a fresh database, with the real model."""
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running():
        yield svc
