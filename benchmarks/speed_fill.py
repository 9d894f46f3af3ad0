"""Filling a lane for the speed benchmark, and measuring curation against raw fastembed.

Jobs are queued with the store's own `insert_job` (the function `remember` calls),
many per hop to the writer thread. Then, with the `worker` fill, the real
`CurationWorker` curates all of them (`run_once` until nothing is due: claim the
lane, embed each batch in one call, evaluate, apply, mark done) and that time is
the curation figure. With the `direct` fill, all but the last `sample` jobs are
curated by a bulk loader that writes exactly what the no-LLM worker would (an
occurrence for an exact normalized-text repeat, otherwise a new memory with its
vector, via the store functions the worker uses) but skips the kNN nomination,
which without an LLM never changes the outcome; the last `sample` jobs then go
through the real worker, at full lane size, and give the curation figure.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import numpy as np

from memwal_mcp.curation import deferred
from memwal_mcp.normalize import norm_key, normalize_text
from memwal_mcp.store.sqlite import jobs as job_store
from memwal_mcp.store.sqlite import memories
from memwal_mcp.store.sqlite import vectors as vector_store
from memwal_mcp.store.sqlite.database import transaction

from . import speed_data

log = logging.getLogger("benchmarks.speed")

QUEUE_CHUNK = 5000
BULK_EMBED = 512


@dataclass
class Fill:
    size: int
    added: int
    queue_s: float
    bulk_s: float
    curated: int  # jobs the real worker curated (the timed part)
    curate_s: float
    raw_texts: int = 0
    raw_s: float = 0.0
    decisions: dict[str, int] = field(default_factory=dict)
    matrix_sync_s: float = 0.0  # bringing the lane's in-memory matrix up to date before the timed part
    copies_load_s: float = 0.0  # loading the embedder's low-priority copies before the timed part
    counted: int = 0  # memories whose nominees the worker counted after the timed part (no LLM)
    count_s: float = 0.0

    @property
    def curation_per_s(self) -> float:
        return self.curated / self.curate_s if self.curate_s > 0 else float("nan")

    @property
    def raw_per_s(self) -> float:
        return self.raw_texts / self.raw_s if self.raw_s > 0 else float("nan")


def _queue(conn: sqlite3.Connection, owner: str, namespace: str, texts: Sequence[str]) -> None:
    for text in texts:
        job_store.insert_job(conn, owner, namespace, text, None, time.time())


def _bulk_apply(
    conn: sqlite3.Connection, batch: Sequence[job_store.QueuedJob], vectors: np.ndarray, model_id: str
) -> int:
    """What the no-LLM worker writes for each job, minus the kNN nomination; one transaction."""
    created = 0
    with transaction(conn):
        for job, vector in zip(batch, vectors):
            now = time.time()
            key = norm_key(job.text)
            same = [
                r
                for r in memories.live_by_norm_key(conn, job.lane_id, key)
                if normalize_text(r[2]) == normalize_text(job.text)
            ]
            if same:
                memories.add_occurrence(conn, same[0][0], now)
                job_store.mark_done(conn, job.id, "occurrence", same[0][1], now)
                memories.bump_counters(conn, ["curation_occurrence"])
                continue
            _, memory_id = memories.create_memory(
                conn,
                owner=job.owner,
                namespace=job.namespace,
                lane=job.lane_id,
                body=job.text,
                key=key,
                source_job_id=job.id,
                vector=vector,
                model_id=model_id,
                now=now,
                occurred_at=job.occurred_at,
                created_at=job.created_at,
            )
            job_store.mark_done(conn, job.id, "created", memory_id, now)
            memories.bump_counters(conn, ["curation_created"])
            created += 1
    return created


def _queued_in_lane(conn: sqlite3.Connection, lane: int) -> int:
    return conn.execute(
        "SELECT COUNT(*) FROM remember_jobs WHERE lane_id = ? AND status = 'queued'", (lane,)
    ).fetchone()[0]


def queued_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM remember_jobs WHERE status = 'queued'").fetchone()[0]


async def _progress(service: Any, label: str, total: int, every_s: float = 15.0) -> None:
    started = time.perf_counter()
    while True:
        await anyio.sleep(every_s)
        left = await service.store.db.read(queued_count)
        done = total - left
        rate = done / (time.perf_counter() - started)
        eta = left / rate if rate > 0 else float("inf")
        log.info("%s: %d/%d jobs done, %.0f/s, about %.0f s left", label, done, total, rate, eta)


async def run_worker(service: Any, label: str, total: int) -> float:
    """Seconds for the service's real worker to curate everything that is queued (run_once until idle)."""
    reporter = asyncio.get_running_loop().create_task(_progress(service, label, total))
    try:
        started = time.perf_counter()
        while await service.worker.run_once():
            pass
        return time.perf_counter() - started
    finally:
        reporter.cancel()


async def count_deferred(service: Any) -> tuple[int, float]:
    """(memories, seconds) for the worker to count the nominees the no-LLM path left for later
    (curation/deferred.py): work curation no longer waits for, timed apart and reported."""
    left = (await service.stats()).nominations_to_count
    started = time.perf_counter()
    while await deferred.count_pass(service.store, service.settings.curation):
        pass
    return left, time.perf_counter() - started


async def raw_embed(embedder: Any, texts: Sequence[str], batch: int) -> float:
    """Seconds for FastEmbedEmbedder.embed_documents over `texts`, `batch` texts per call, as the worker calls it."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        await anyio.to_thread.run_sync(embedder.embed_documents, list(texts[start : start + batch]))
    return time.perf_counter() - started


async def grow(
    service: Any,
    embedder: Any,
    owner: str,
    namespace: str,
    seed: int,
    start: int,
    stop: int,
    fill: str,
    sample: int,
    raw_max: int,
) -> Fill:
    """Add facts start..stop-1 to the lane through the write path; measure curation and raw fastembed."""
    added = stop - start
    if added <= 0:  # a continued database already holds this size: nothing to add or time
        return Fill(stop, 0, 0.0, 0.0, 0, 0.0)
    queue_started = time.perf_counter()
    for chunk in range(start, stop, QUEUE_CHUNK):
        texts = list(speed_data.facts(seed, chunk, min(stop, chunk + QUEUE_CHUNK)))
        await service.store.db.write(_queue, owner, namespace, texts)
    queue_s = time.perf_counter() - queue_started
    log.info("queued %d jobs in %.1f s (%.0f/s)", added, queue_s, added / queue_s)

    timed = added if fill == "worker" else min(added, sample)
    bulk_s = 0.0
    if timed < added:
        bulk_s = await _bulk(service, embedder, owner, namespace, added - timed)
    # Jobs an interrupted earlier run left queued (a continued --db) are curated and timed
    # too; they are the facts just before these, so the raw sample stays the same texts.
    lane = await service.store.db.read(job_store.lane_id, owner, namespace)
    timed = await service.store.db.read(_queued_in_lane, lane)

    sampled = list(speed_data.facts(seed, stop - timed, stop))
    if len(sampled) > raw_max:  # evenly spaced, so the length mix is the same
        step = len(sampled) / raw_max
        sampled = [sampled[int(i * step)] for i in range(raw_max)]
    batch = service.settings.curation.batch_size
    half = len(sampled) // 2
    raw_s = await raw_embed(embedder, sampled[:half], batch)  # half before, half after: load drift cancels out

    # A running worker keeps the lane's matrix in step batch by batch; the bulk loader did not,
    # so bring it up to date first (timed apart: a server pays this once, at its first search).
    sync_started = time.perf_counter()
    await service.store.db.read(memories.lane_batch_search, lane)
    sync_s = time.perf_counter() - sync_started
    # Likewise the curation copies of the model (a server loads them at its first burst):
    # the timed part is the steady rate, not one load's.
    copies_started = time.perf_counter()
    await anyio.to_thread.run_sync(_load_copies, embedder)
    copies_s = time.perf_counter() - copies_started
    log.info(
        "lane matrix brought up to date in %.2f s, model copies loaded in %.2f s; curating %d jobs with"
        " the real worker",
        sync_s,
        copies_s,
        timed,
    )
    curate_s = await run_worker(service, f"curation to {stop}", timed)
    counted, count_s = await count_deferred(service)
    raw_s += await raw_embed(embedder, sampled[half:], batch)
    log.info(
        "curated %d jobs in %.1f s (%.1f/s), their nominees counted after in %.1f s; raw fastembed"
        " %.1f texts/s over %d texts",
        timed,
        curate_s,
        timed / curate_s,
        count_s,
        len(sampled) / raw_s if raw_s else 0,
        len(sampled),
    )
    decisions = dict(
        await service.store.db.read(
            lambda conn: conn.execute(
                "SELECT COALESCE(decision, status), COUNT(*) FROM remember_jobs WHERE namespace = ? GROUP BY 1",
                (namespace,),
            ).fetchall()
        )
    )
    return Fill(
        stop,
        added,
        queue_s,
        bulk_s,
        timed,
        curate_s,
        len(sampled),
        raw_s,
        decisions,
        sync_s,
        copies_s,
        counted,
        count_s,
    )


def _load_copies(embedder: Any) -> None:
    start = getattr(embedder, "start_background", None)
    copies = start() if start is not None else None
    if copies is not None:
        copies.ready(timeout=120)


async def _bulk(service: Any, embedder: Any, owner: str, namespace: str, count: int) -> float:
    started = time.perf_counter()
    await service.store.db.write(vector_store.ensure_vector_table, embedder.model_id, embedder.dim)
    lane = await service.store.db.read(job_store.lane_id, owner, namespace)
    done = 0
    last_log = started
    while done < count:
        batch = await service.store.db.read(job_store.next_batch, lane, min(BULK_EMBED, count - done), time.time())
        if not batch:
            break
        vectors = await anyio.to_thread.run_sync(embedder.embed_documents, [job.text for job in batch])
        await service.store.db.write(_bulk_apply, batch, vectors, embedder.model_id)
        done += len(batch)
        if time.perf_counter() - last_log > 15:
            last_log = time.perf_counter()
            rate = done / (last_log - started)
            log.info("direct fill: %d/%d, %.0f/s, about %.0f s left", done, count, rate, (count - done) / rate)
    seconds = time.perf_counter() - started
    log.info("direct fill: %d jobs in %.1f s", done, seconds)
    return seconds
