"""Filling a lane for the speed benchmark, and measuring curation against raw fastembed.

Jobs are queued with the store's own `insert_job` (the function `remember` calls),
many per hop to the writer thread. Then, with the `worker` fill, the real
`CurationWorker` curates all of them (`run_once` until nothing is due: claim the
lane, embed each batch in one call, evaluate, apply, mark done) and that time is
the curation figure. With the `direct` fill, all but the last `sample` jobs are
curated by a bulk loader: the worker's own write path (`curate_until_llm`, under the
lane's lease) in batches of BULK_EMBED, without the worker's scheduling and pauses; the
nominees of what it creates are counted afterwards, as the no-LLM worker does. The last
`sample` jobs then go through the real worker, at full lane size, and give the curation
figure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from memwal_mcp.curation import deferred
from memwal_mcp.curation.apply import curate_until_llm
from memwal_mcp.store import StoreReader, StoreWriter
from memwal_mcp.store.leases import lease_holder_id

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


def _queue(writer: StoreWriter, owner: str, namespace: str, texts: Sequence[str]) -> None:
    for text in texts:  # each insert is its own transaction, as a remember's is
        writer.insert_job(owner, namespace, text, None, time.time())


def queued_count(reader: StoreReader) -> int:
    return reader.queue_counts().get("queued", 0)


def lane_of(reader: StoreReader, owner: str, namespace: str) -> int:
    return next(lane.id for lane in reader.owner_lanes(owner) if lane.namespace == namespace)


async def _progress(service: Any, label: str, total: int, every_s: float = 15.0) -> None:
    started = time.perf_counter()
    while True:
        await anyio.sleep(every_s)
        left = await service.store.read(queued_count)
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
        await service.store.write(_queue, owner, namespace, texts)
    queue_s = time.perf_counter() - queue_started
    log.info("queued %d jobs in %.1f s (%.0f/s)", added, queue_s, added / queue_s)

    timed = added if fill == "worker" else min(added, sample)
    bulk_s = 0.0
    if timed < added:
        bulk_s = await _bulk(service, embedder, owner, namespace, added - timed)
    # Jobs an interrupted earlier run left queued (a continued --db) are curated and timed
    # too; they are the facts just before these, so the raw sample stays the same texts.
    lane = await service.store.read(lane_of, owner, namespace)
    timed = await service.store.read(queued_count)

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
    await service.store.read(lambda reader: reader.vector_search(lane))
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
    """Start curation's low-priority threads before the timed part (they share the loaded
    model, so there is nothing to wait for)."""
    start = getattr(embedder, "start_background", None)
    if start is not None:
        start()


async def _bulk(service: Any, embedder: Any, owner: str, namespace: str, count: int) -> float:
    async def embedded(texts: list[str]) -> Any:
        return await anyio.to_thread.run_sync(embedder.embed_documents, texts)

    return await bulk_curate(service, embedder.model_id, embedder.dim, owner, namespace, count, embedded)


async def bulk_curate(
    service: Any,
    model_id: str,
    dim: int,
    owner: str,
    namespace: str,
    count: int,
    vectors_for: Callable[[list[str]], Awaitable[Any]],
) -> float:
    """Seconds to curate `count` queued jobs of the lane through the worker's write path, in
    batches of BULK_EMBED, each batch's vectors from `vectors_for(texts)`."""
    started = time.perf_counter()
    settings = service.settings.curation
    await service.store.write(lambda writer: writer.ensure_vector_table(model_id, dim))
    lane = await service.store.read(lane_of, owner, namespace)
    holder = lease_holder_id()
    claimed = await service.store.write(lambda writer: writer.claim_lane(holder, 3600.0, time.time()))
    assert claimed is not None and claimed.id == lane, "the benchmark's lane has no due jobs"
    done = 0
    last_log = started
    try:
        while done < count:
            size = min(BULK_EMBED, count - done)
            batch = await service.store.read(lambda reader: reader.next_batch(lane, size, time.time()))
            if not batch:
                break
            vectors = await vectors_for([job.text for job in batch])
            by_job = {job.id: vector for job, vector in zip(batch, vectors)}
            await service.store.write(
                lambda writer: curate_until_llm(
                    writer,
                    lane=lane,
                    holder=holder,
                    settings=settings,
                    llm_hold_s=3600.0,
                    batch=batch,
                    vectors=by_job,
                    model_id=model_id,
                    llm_available=False,
                )
            )
            done += len(batch)
            if time.perf_counter() - last_log > 15:
                last_log = time.perf_counter()
                rate = done / (last_log - started)
                log.info("direct fill: %d/%d, %.0f/s, about %.0f s left", done, count, rate, (count - done) / rate)
    finally:
        await service.store.write(lambda writer: writer.release_lease(lane, holder))
    seconds = time.perf_counter() - started
    log.info("direct fill: %d jobs in %.1f s", done, seconds)
    return seconds
