"""The curation worker: claims a lane, embeds its queued jobs in one call, folds them in.

Runs as a task inside the server process (and briefly inside CLI commands). Several
processes may serve one database file; the lane lease keeps them from curating the
same (owner, namespace) at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import numpy as np

from ..config import CurationSettings
from ..embedding import Embedder, LazyEmbedder
from ..errors import EmbeddingError
from ..store import Database
from ..store import jobs as job_store
from ..store import memories
from .apply import LeaseLost, curate_jobs, needs_vector, record_failures

log = logging.getLogger("memwal_mcp.curation")


class CurationWorker:
    def __init__(
        self,
        db: Database,
        embedder: LazyEmbedder,
        settings: CurationSettings,
        on_progress: Callable[[], None] = lambda: None,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._settings = settings
        self._on_progress = on_progress
        self._wake = anyio.Event()
        self.holder = job_store.lease_holder_id()
        self._vector_model: str | None = None
        self._vector_error: EmbeddingError | None = None

    def wake(self) -> None:
        """New work was queued by this process: stop idling."""
        self._wake.set()

    async def run(self) -> None:
        """Work until cancelled."""
        while True:
            try:
                worked = await self.run_once()
            except Exception:  # keep serving: a broken pass must not kill the worker task
                log.exception("curation pass failed")
                worked = False
            if not worked:
                with anyio.move_on_after(self._settings.poll_interval_s):
                    await self._wake.wait()
                self._wake = anyio.Event()

    async def run_once(self) -> bool:
        """Curate one lane (all its due jobs); False when there was nothing to do."""
        lane = await self._db.write(job_store.claim_lane, self.holder, self._settings.lease_s, time.time())
        if lane is None:
            return await self._embed_backlog()
        try:
            while True:
                batch = await self._db.write(job_store.next_batch, lane.id, self._settings.batch_size, time.time())
                if not batch:
                    break
                await self._curate(lane.id, batch)
                self._on_progress()
        except LeaseLost:
            log.warning("lost the lease on lane %s/%s; another worker took over", lane.owner, lane.namespace)
        finally:
            await self._db.write(job_store.release_lease, lane.id, self.holder)
        return True

    async def _curate(self, lane: int, batch: list[job_store.QueuedJob]) -> None:
        enabled = self._settings.enabled
        vectors: dict[str, np.ndarray] = {}
        embedder = await self._vector_embedder()
        if embedder is not None:
            wanted = await self._db.write(needs_vector, lane, batch, enabled)
            texts = {job.id: job.text for job in batch}
            try:
                matrix = await anyio.to_thread.run_sync(embedder.embed_documents, [texts[i] for i in wanted])
            except Exception as exc:
                log.exception("embedding a batch of %d jobs failed", len(wanted))
                await self._db.write(record_failures, batch, f"embedding failed: {exc}", self._settings.max_attempts)
                return
            vectors = dict(zip(wanted, matrix))
        await self._db.write(
            lambda conn: curate_jobs(
                conn,
                lane=lane,
                holder=self.holder,
                lease_s=self._settings.lease_s,
                batch=batch,
                vectors=vectors,
                model_id=embedder.model_id if embedder else None,
                curation_enabled=enabled,
                max_attempts=self._settings.max_attempts,
            )
        )

    async def _vector_embedder(self) -> Embedder | None:
        """The embedder, once the database has agreed to its dimension; None means no vectors."""
        embedder = await self._embedder.get()
        if embedder is None or self._vector_error is not None:
            return None
        if self._vector_model != embedder.model_id:
            try:
                other = await self._db.write(memories.ensure_vector_table, embedder.model_id, embedder.dim)
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

    async def _embed_backlog(self) -> bool:
        """Give vectors to memories made while the model was unavailable."""
        embedder = await self._vector_embedder() if self._embedder.enabled else None
        if embedder is None:
            return False
        rows = await self._db.read(memories.unembedded, 256)
        if not rows:
            return False
        matrix = await anyio.to_thread.run_sync(embedder.embed_documents, [body for _, _, body in rows])
        items = [(rowid, lane, vector) for (rowid, lane, _), vector in zip(rows, matrix)]
        await self._db.write(memories.set_vectors, items, embedder.model_id)
        log.info("embedded %d memories that were stored without a vector", len(items))
        return True
