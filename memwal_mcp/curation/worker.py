"""The curation worker: claims a lane, embeds its queued jobs in one call, folds them in.

Runs as a task inside the server process (and briefly inside CLI commands). Several
processes may serve one database file; the lane lease keeps them from curating the
same (owner, namespace) at once.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio
import numpy as np
from anyio.streams.memory import MemoryObjectSendStream

from ..concurrently import side_by_side
from ..config import CurationSettings
from ..embedding import Embedder, LazyEmbedder, background_embed
from ..errors import EmbeddingError, StoreBusy, StoreUnreachable
from ..store import Store, VectorMatch
from ..store.leases import lease_holder_id
from ..store.records import QueuedJob
from .apply import LeaseLost, apply_plan, busy_retry_s, curate_until_llm, needs_vector, record_failures
from .deferred import count_pass
from .evaluator import Evaluation
from .llm import Decider
from .nominator import nearest_each
from .plan import MergePlan, plan_outcome

log = logging.getLogger("memwal_mcp.curation")
K = TypeVar("K")
Prepared = tuple[list[QueuedJob], dict[str, np.ndarray]]
# Batches being embedded at once while one is curated: the next one, and one more, so the
# embedding copies never wait for a batch to be claimed and checked.
LOOKAHEAD = 2
# Woken by a remember, the worker first waits for tool calls to pause for QUIET_S -- but
# never longer than MAX_DEFER_S -- unless someone waits for the result (`hurry`). Curating
# each lone remember at once put its embedding (on the main model, at normal priority)
# beside the next tool call on 2 cores; waiting lets a burst go to the low-priority copies
# as one batch. 300 remembers back to back over stdio at 100k: p50 3.0-3.7 ms curating at
# once, 2.1-2.9 ms with the pause, with 110-150 of them curated during the loop.
QUIET_S = 0.03
MAX_DEFER_S = 0.1


class CurationWorker:
    def __init__(
        self,
        store: Store,
        embedder: LazyEmbedder,
        settings: CurationSettings,
        on_progress: Callable[[], None] = lambda: None,
        decider: Decider | None = None,
        llm_timeout_s: float = 10.0,
        max_body_bytes: int = 65536,
    ) -> None:
        self._store = store
        self._max_body_bytes = max_body_bytes
        self._decider = decider
        self._llm_timeout_s = llm_timeout_s
        self._embedder = embedder
        self._settings = settings
        self._on_progress = on_progress
        self._wake = anyio.Event()
        self._hurry = False
        self.holder = lease_holder_id()
        self._vector_model: str | None = None
        self._vector_error: EmbeddingError | None = None

    def wake(self) -> None:
        """New work was queued by this process: stop idling (once tool calls pause)."""
        self._wake.set()

    def hurry(self) -> None:
        """Someone waits for curation (a recall that must see a fresh remember, a `wait_ms`):
        start now, without waiting for a pause."""
        self._hurry = True
        self._wake.set()

    async def run(self) -> None:
        """Work until cancelled."""
        busy_passes = 0
        until = ""  # what the pause waits for
        while True:
            self._hurry = False
            try:
                worked = await self.run_once()
            except StoreBusy as exc:
                # Another session holds a lock (a LOCK TABLE, a VACUUM FULL), or PostgreSQL does not
                # answer: the pass wrote nothing and counted no attempt, so its jobs stay queued; try
                # them again with a growing pause. One line for the whole wait, not a traceback per pass.
                if busy_passes == 0:
                    until = "the database answers" if isinstance(exc, StoreUnreachable) else "the lock is released"
                    log.warning(
                        "curation paused until %s, its jobs kept queued and curated then (%s)",
                        until,
                        str(exc).removesuffix("; try again"),
                    )
                await anyio.sleep(busy_retry_s(busy_passes))
                busy_passes += 1
                continue
            except Exception:  # keep serving: a broken pass must not kill the worker task
                log.exception("curation pass failed")
                worked = False
            if busy_passes:
                log.info("%s; curation goes on", until.replace("answers", "answers again"))
                busy_passes = 0
            if not worked:
                if not await self._count_deferred():
                    with anyio.move_on_after(self._settings.poll_interval_s):
                        await self._wake.wait()
                if self._wake.is_set():
                    await self._pause()
                self._wake = anyio.Event()

    async def _count_deferred(self) -> bool:
        """One pass of counting nominees left for later (curation/deferred.py); False if none wait."""
        try:
            return await count_pass(self._store, self._settings)
        except StoreBusy as exc:  # another process holds the write lock: the counts wait, as curation does
            log.info("counting deferred nominations waits for the lock (%s)", str(exc).removesuffix("; try again"))
            return False
        except Exception:  # only counters: a broken pass must not stop curation
            log.exception("counting deferred nominations failed")
            return False

    async def _pause(self) -> None:
        """Wait until wake-ups stop coming for QUIET_S, at most MAX_DEFER_S, or a hurry."""
        deadline = anyio.current_time() + MAX_DEFER_S
        while not self._hurry and (left := deadline - anyio.current_time()) > 0:
            self._wake = anyio.Event()
            with anyio.move_on_after(min(QUIET_S, left)):
                await self._wake.wait()
            if not self._wake.is_set():
                return

    async def run_once(self) -> bool:
        """Curate one lane (all its due jobs); False when there was nothing to do."""
        lane = None
        if await self._store.read(lambda reader: reader.has_due_jobs(time.time())):
            lane = await self._store.write(
                lambda writer: writer.claim_lane(self.holder, self._settings.lease_s, time.time())
            )
        if lane is None:
            return await self._embed_backlog()
        try:
            await self._curate_lane(lane.id)
        except LeaseLost:
            log.warning("lost the lease on lane %s/%s; another worker took over", lane.owner, lane.namespace)
        finally:
            await self._store.write(lambda writer: writer.release_lease(lane.id, self.holder))
        return True

    async def _curate_lane(self, lane: int) -> None:
        """Curate the lane's due jobs batch by batch, in arrival order, while the batches after
        the current one are embedded (on the low-priority copies): the writer's SQL and the
        embedding overlap on the cores, and with LOOKAHEAD batches in flight the copies
        always have a chunk to take."""
        send, receive = anyio.create_memory_object_stream[Prepared](0)

        async def consume() -> None:
            async with receive:
                async for batch, vectors in receive:
                    await self._curate(lane, batch, vectors)
                    self._on_progress()

        await side_by_side(lambda: self._feed(lane, send), consume)

    async def _feed(self, lane: int, send: MemoryObjectSendStream[Prepared]) -> None:
        """Batches of the lane, each prepared, in order; up to LOOKAHEAD being prepared at once."""
        size = self._settings.batch_size
        after = 0
        pending: deque[tuple[anyio.Event, list[Prepared]]] = deque()
        errors: list[Exception] = []

        async def prepare(batch: list[QueuedJob], done: anyio.Event, out: list[Prepared]) -> None:
            try:
                out.append(await self._prepare(lane, batch))
            except Exception as exc:
                errors.append(exc)
            finally:
                done.set()

        async with send:
            async with anyio.create_task_group() as tg:
                try:
                    while not errors:
                        batch = await self._store.read(lambda reader: reader.next_batch(lane, size, time.time(), after))
                        if batch:
                            after = batch[-1].seq
                            pending.append((anyio.Event(), []))
                            tg.start_soon(prepare, batch, *pending[-1])
                        while pending and not errors and (not batch or len(pending) >= LOOKAHEAD):
                            done, out = pending.popleft()
                            await done.wait()
                            if out:
                                await send.send(out[0])
                        if not batch:
                            break
                except anyio.BrokenResourceError:  # curation stopped (lease lost): stop feeding
                    pass
                except Exception as exc:
                    errors.append(exc)
                tg.cancel_scope.cancel()
        if errors:
            raise errors[0]

    async def _prepare(self, lane: int, batch: list[QueuedJob]) -> tuple[list[QueuedJob], dict[str, np.ndarray]]:
        """Embed what the batch needs; jobs whose text cannot be embedded are recorded as
        failed attempts and left out. Nominations wait for `_curate`: they must see the
        memories the batch before this one created."""
        vectors: dict[str, np.ndarray] = {}
        embedder = await self._vector_embedder()
        if embedder is not None:
            wanted = set(await self._store.read(needs_vector, lane, batch, self._settings.enabled))
            vectors, failed = await self._embed_each(
                embedder, [(job.id, job.text) for job in batch if job.id in wanted]
            )
            if failed:
                by_id = {job.id: job for job in batch}
                for error, ids in failed.items():
                    await self._store.write(
                        record_failures, [by_id[i] for i in ids], error, self._settings.max_attempts
                    )
                failed_ids = {i for ids in failed.values() for i in ids}
                batch = [job for job in batch if job.id not in failed_ids]
        return batch, vectors

    async def _curate(self, lane: int, batch: list[QueuedJob], vectors: dict[str, np.ndarray]) -> None:
        settings = self._settings
        embedder = await self._vector_embedder()
        model_id = embedder.model_id if embedder else None
        llm_hold_s = max(settings.lease_s, self._llm_timeout_s + 5)
        # Without an LLM the outcome is CREATE whatever the scan finds: its nominees are counted later.
        scan = settings.enabled and self._decider is not None
        nearest = await self._nearest(lane, batch, vectors) if scan else None

        remaining = batch
        while remaining:
            consumed, evaluation = await self._store.write(
                lambda writer: curate_until_llm(
                    writer,
                    lane=lane,
                    holder=self.holder,
                    settings=settings,
                    llm_hold_s=llm_hold_s,
                    batch=remaining,
                    vectors=vectors,
                    model_id=model_id,
                    llm_available=self._decider is not None,
                    # A later run must also see what the runs before it created: found there.
                    nearest=nearest if remaining is batch else None,
                )
            )
            if evaluation is None or self._decider is None:
                return
            job = remaining[consumed]
            plan = await self._plan(job, evaluation)
            vector = vectors.get(job.id)
            if plan.kind == "merge" and plan.body is not None and embedder is not None:
                try:
                    vector = (await anyio.to_thread.run_sync(self._background(embedder), [plan.body]))[0]
                except Exception:  # the memory is written anyway; the backlog pass embeds it later
                    log.exception("embedding a merged body failed")
                    vector = None
            elif plan.kind == "merge":
                vector = None
            await self._store.write(
                lambda writer: apply_plan(
                    writer,
                    lane=lane,
                    holder=self.holder,
                    settings=settings,
                    job=job,
                    evaluation=evaluation,
                    plan=plan,
                    vector=vector,
                    model_id=model_id,
                    llm_model=self._decider.model if self._decider else None,
                )
            )
            self._on_progress()
            remaining = remaining[consumed + 1 :]

    async def _plan(self, job: QueuedJob, evaluation: Evaluation) -> MergePlan:
        """What the LLM decided, planned. Nothing the LLM tier raises may keep the job from
        completing: it was queued, so it is curated -- and a failing decider means CREATE
        (README), not a job retried forever that holds up its lane."""
        assert self._decider is not None
        try:
            decision = await self._decider.decide(job.text, evaluation.nominees)
            return plan_outcome(job.text, decision, self._max_body_bytes)
        except Exception:
            log.exception("the LLM decision for job %s failed; the proposal is created", job.id)
            return plan_outcome(job.text, None, self._max_body_bytes)

    async def _nearest(
        self, lane: int, batch: list[QueuedJob], vectors: dict[str, np.ndarray]
    ) -> dict[str, list[VectorMatch]] | None:
        """Each job's kNN over the lane, found before the write transaction: the lane's
        vectors are brought up to date on the reader and the matrix product runs on a worker
        thread, so the writer -- which every remember waits for -- never does this scan
        (64 x 1M vectors: 177 ms a batch). It keeps normal priority: at nice +10, like the
        embedding copies, curation at 1M lost 4 % (132 vs 137-139/s) and recalls beside it
        gained nothing measurable (400-450 ms p50 at 1M either way)."""
        wanted = {job.id: vectors[job.id] for job in batch if job.id in vectors}
        if not wanted:
            return None
        search = await self._store.read(lambda reader: reader.vector_search(lane))
        k, threshold = self._settings.nominator_k, self._settings.nominator_threshold
        return await anyio.to_thread.run_sync(nearest_each, search, wanted, k, threshold)

    def _background(self, embedder: Embedder) -> Callable[[Sequence[str]], np.ndarray]:
        """The low-priority embedding; with an LLM, the nomination scans run beside it."""
        return background_embed(embedder, scans_beside=self._decider is not None)

    async def _embed_each(
        self, embedder: Embedder, items: list[tuple[K, str]], waited_for: bool = False
    ) -> tuple[dict[K, np.ndarray], dict[str, list[K]]]:
        """Vectors by key, in one call; if that fails, one by one, so a text the model cannot
        embed fails alone instead of dragging its batch down with it. Failures by error text.
        `waited_for`: at normal priority over the cores, not on curation's low-priority path."""
        embed = embedder.embed_documents if waited_for else self._background(embedder)
        try:
            matrix = await anyio.to_thread.run_sync(embed, [text for _, text in items])
            return dict(zip((key for key, _ in items), matrix)), {}
        except Exception:
            log.exception("embedding a batch of %d texts failed; embedding them one by one", len(items))
        vectors: dict[K, np.ndarray] = {}
        failed: dict[str, list[K]] = {}
        for key, text in items:
            try:
                vectors[key] = (await anyio.to_thread.run_sync(embed, [text]))[0]
            except Exception as exc:
                failed.setdefault(f"embedding failed: {type(exc).__name__}: {exc}", []).append(key)
        return vectors, failed

    async def _vector_embedder(self) -> Embedder | None:
        """The embedder, once the database has agreed to its dimension; None means no vectors."""
        embedder = await self._embedder.get()
        if embedder is None or self._vector_error is not None:
            return None
        if self._vector_model != embedder.model_id:
            try:
                other = await self._store.write(
                    lambda writer: writer.ensure_vector_table(embedder.model_id, embedder.dim)
                )
            except EmbeddingError as exc:
                self._vector_error = exc
                log.error("%s New memories are stored without vectors.", exc)
                return None
            if other:
                log.warning(
                    "the database's vectors were made by %r, the configured model is %r; "
                    "similarity between them is unreliable until the memories are re-embedded",
                    other,
                    embedder.model_id,
                )
            self._vector_model = embedder.model_id
        return embedder

    async def embed_backlog(self) -> bool:
        """One pass of the backlog embedding, without curating anything, for someone who waits
        for it: a migration gives the memories it moved vectors this way (at normal priority,
        split over the cores, as reindex embeds) and leaves their queued jobs to the servers."""
        return await self._embed_backlog(waited_for=True)

    async def _embed_backlog(self, waited_for: bool = False) -> bool:
        """Give vectors to memories made while the model was unavailable."""
        if not self._embedder.enabled or self._embedder.error is not None or self._vector_error is not None:
            return False
        # Looked for before the model is asked for: an idle server that has nothing to embed
        # does not load it (about 95 MiB) until a recall or a remember needs it.
        rows = await self._store.read(lambda reader: reader.unembedded(256))
        if not rows:
            return False
        embedder = await self._vector_embedder()
        if embedder is None:
            return False
        found = {rowid: (lane, body) for rowid, lane, body in rows}
        vectors, failed = await self._embed_each(embedder, [(rowid, body) for rowid, _, body in rows], waited_for)
        if vectors:
            items = [(rowid, *found[rowid], vector) for rowid, vector in vectors.items()]
            stored = await self._store.write(lambda writer: writer.set_vectors(items, embedder.model_id))
            log.info("embedded %d memories that were stored without a vector", stored)
        for error, rowids in failed.items():
            # Not retried on every idle pass: full-text search still finds them; reindex retries.
            await self._store.write(lambda writer: writer.mark_unembeddable(rowids))
            log.error("%d memories cannot be embedded (%s); they stay findable by their words", len(rowids), error)
        return True
