"""Expiry, supersede and bulk remember through the service on PostgreSQL: the service tests
written for SQLite (tests/test_expiry_supersede.py), run unchanged against a running service
(store, real worker, real model) on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService

from .. import test_expiry_supersede as on_sqlite

CASES: list[Callable[[MemoryService], Awaitable[None]]] = [
    getattr(on_sqlite, name) for name in sorted(dir(on_sqlite)) if name.startswith("test_")
]


@pytest.fixture
async def pg_service(pg_url: str, embedder: FastEmbedEmbedder) -> AsyncIterator[MemoryService]:
    svc = MemoryService(load_settings(db_url=pg_url), embedder=embedder)
    async with svc.running():
        yield svc


@pytest.mark.parametrize("case", CASES, ids=[case.__name__ for case in CASES])
async def test_as_on_sqlite(case: Callable[[MemoryService], Awaitable[None]], pg_service: MemoryService) -> None:
    await case(pg_service)
