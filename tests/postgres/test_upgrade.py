"""A replica left running through a rolling upgrade: once a newer memwal-mcp has migrated the
database, this version stops curating (its jobs wait, untouched, for the newer version instead
of failing for good on tables that changed) and refuses to open the database again."""

from __future__ import annotations

import time

import anyio
import psycopg
import pytest

from memwal_mcp.config import Settings, load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import StoreUnavailable
from memwal_mcp.service import MemoryService
from memwal_mcp.store.postgres.migrations import shipped_version


async def test_a_server_left_running_through_an_upgrade_leaves_its_jobs_queued(
    pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    settings = load_settings(db_url=pg_url)
    newer = f"{shipped_version() + 1:03d}_from_a_newer_version"
    try:
        await _run_through_an_upgrade(settings, pg_url, newer, embedder)
    finally:  # the database goes back to the shared server for the next test
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DELETE FROM schema_migrations WHERE version > %s", (shipped_version(),))


async def _run_through_an_upgrade(settings: Settings, pg_url: str, newer: str, embedder: FastEmbedEmbedder) -> None:
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        first = await svc.remember("local", "The build server is in rack 4", wait_ms=10_000)
        assert first.job.status == "done"
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (shipped_version() + 1, newer, time.time()),
            )
        job = (await svc.remember("local", "The staging server is in rack 7")).job
        await anyio.sleep(1.5)
        (after,) = await svc.status("local", [job.id])
    assert after.status == "queued"
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT attempts FROM remember_jobs WHERE id = %s", (job.id,)).fetchall() == [(0,)]
    again = MemoryService(settings, embedder=embedder)
    with pytest.raises(StoreUnavailable, match=newer):
        async with again.running():
            raise AssertionError("an older version opened a database a newer one migrated")
