"""Curation facing a table lock another session holds for longer than many `lock_wait_s`: each
try ends in "stayed locked ... try again", which is not the job's fault, so none of them may use
up an attempt -- the acknowledged fact is curated once the lock is gone, exactly once."""

from __future__ import annotations

import logging
import time

import anyio
import psycopg
import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService

FACT = "The gondola depot opens at 7:40 on weekdays"
LOCK_WAIT_S = 0.3
# Few attempts, so that without the fix the lock outlasts all of them (their backoff: 0.5 s, 1 s).
MAX_ATTEMPTS = 2
HOLD_S = 5 * LOCK_WAIT_S + 1.5


async def test_a_long_table_lock_uses_up_no_attempt_and_the_fact_is_remembered_once(
    pg_url: str, embedder: FastEmbedEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(
        db_url=pg_url, storage={"lock_wait_s": LOCK_WAIT_S}, curation={"max_attempts": MAX_ATTEMPTS}
    )
    service = MemoryService(settings, embedder=embedder)
    caplog.set_level(logging.INFO, logger="memwal_mcp")
    async with service.running():
        # The model loaded and the vector table made before the lock: the lock meets the row's INSERT.
        first = await service.remember("alice", "The ferry leaves from pier 3", wait_ms=15_000)
        assert first.job.status == "done"
        with psycopg.connect(pg_url, application_name="table-locker") as holder:
            holder.execute("BEGIN")
            holder.execute("LOCK TABLE memories IN EXCLUSIVE MODE")
            job = (await service.remember("alice", FACT)).job
            started = time.monotonic()
            while time.monotonic() - started < HOLD_S:
                (seen,) = await service.status("alice", [job.id])
                assert seen.status == "queued" and seen.attempts == 0, seen
                await anyio.sleep(0.1)
            holder.rollback()
            (done,) = await service.status("alice", [job.id], wait_ms=15_000)
            (made,) = holder.execute("SELECT count(*) FROM memories WHERE source_job_id = %s", (job.id,)).fetchone()
    assert done.status == "done", done
    assert done.attempts < MAX_ATTEMPTS and done.error is None, done
    assert made == 1
    async with service.running():
        found = await service.recall("alice", "when does the gondola depot open", limit=5)
    texts = [hit.text for hit in found.hits]
    assert texts[0] == FACT and texts.count(FACT) == 1, texts
    waits = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "locked" in r.getMessage()]
    assert len(waits) == 1, waits  # one line for the whole wait, not one per try
    assert "\n" not in waits[0] and f"for {LOCK_WAIT_S:g}s" in waits[0], waits[0]
