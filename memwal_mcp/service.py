"""MemoryService: remember, status, recall, stats. What every entry point calls.

Owns the database, the lazily loaded embedder and (optionally) the curation
worker. The MCP server and the CLI are thin adapters over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import anyio

from . import validation
from .config import Settings
from .curation.llm import make_decider
from .curation.worker import CurationWorker
from .embedding import Embedder, LazyEmbedder
from .errors import EmbeddingError, IdempotencyKeyReused, InvalidInput, NotFound
from .normalize import norm_key
from .recall.lexical import searchable
from .recall.search import SearchParams, search
from .recall.unindexed_vectors import UnindexedVectors
from .records import (
    ForgetOutcome,
    History,
    Hit,
    Job,
    MemoryItem,
    MemoryPage,
    RecallResult,
    RememberOutcome,
    UndoOutcome,
)
from .store import Store, StoreReader, open_store

log = logging.getLogger(__name__)

# How often a waiter re-reads job state when no in-process signal arrives
# (another process may be the one curating the lane).
_POLL_S = 0.05


# Meaning score (cosine with the query) from which forget --query erases a fact that shares no
# content word with the query. With the default model, facts about another topic reach 0.2-0.45
# ("quantum physics" vs "Alice takes the 8:15 train": 0.19); a paraphrase of the query, 0.6 and more.
FORGET_MIN_COSINE = 0.6


@dataclass(frozen=True, slots=True)
class ForgetMatch:
    hit: Hit
    ids: tuple[str, ...]  # the hit and every stored copy of its text: what forgetting it erases


@dataclass(frozen=True, slots=True)
class Stats:
    queue: dict[str, int]
    counters: dict[str, int]
    vector_model: tuple[str, int] | None
    db_path: str
    nominations_to_count: int = 0  # memories made on the no-LLM path whose nominees are not counted yet


@dataclass(frozen=True, slots=True)
class Activity:
    """One owner's journal in figures (the dashboard's activity page). Only that owner's jobs:
    the server-wide queue and markers are `stats()`, which says nothing per owner."""

    queue: dict[str, int]  # jobs by status: queued, done, failed
    per_day: list[tuple[str, int]]  # (UTC day, remembers filed that day), oldest first, every day of the window
    decisions: dict[str, int]  # how curation ended the jobs: created, occurrence, skipped, updated, ...


# The longest window activity() counts remembers over, in days.
MAX_ACTIVITY_DAYS = 366


class MemoryService:
    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._store = open_store(settings)
        self.embedder = LazyEmbedder(settings.embedding, embedder)
        self.worker = CurationWorker(
            self._store,
            self.embedder,
            settings.curation,
            self._progressed,
            decider=make_decider(settings.llm),
            llm_timeout_s=settings.llm.timeout_s,
            max_body_bytes=settings.limits.max_text_bytes,
        )
        self._progress = anyio.Event()
        self._unindexed = UnindexedVectors()  # vectors of queued facts, kept across recalls
        self._worker_task: asyncio.Task[None] | None = None

    @property
    def store(self) -> Store:
        """The store contract, for the commands that move whole stores (export, import, check,
        tokens): everything else goes through the service's own methods."""
        return self._store

    # --- lifecycle -----------------------------------------------------------

    async def start(self, worker: bool = True) -> None:
        """Open the store and, if asked, start the curation worker in the background.

        A plain asyncio task rather than a task group, so start() and close() may be
        called from different tasks (test fixtures, server lifespans) safely.
        """
        await self._store.open()
        await self._check_model()
        if worker:
            self._worker_task = asyncio.get_running_loop().create_task(self.worker.run(), name="memwal-curation")

    async def _check_model(self) -> None:
        """Say at start-up, not at the first failing search, that the model changed."""
        stored = await self._store.read(lambda reader: reader.vector_model())
        configured = self.settings.embedding.model
        if stored is not None and self.settings.embedding.enabled and stored[0] != configured:
            log.warning(
                "this database's vectors were made by %r (%d dimensions) but the configured model is %r: "
                "run `memwal-mcp reindex` to re-embed the memories with it, or configure %r again",
                stored[0],
                stored[1],
                configured,
                stored[0],
            )

    async def close(self) -> None:
        task, self._worker_task = self._worker_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.embedder.close()
        await self._store.close()

    @asynccontextmanager
    async def running(self, worker: bool = True) -> AsyncIterator[MemoryService]:
        await self.start(worker)
        try:
            yield self
        finally:
            await self.close()

    def _progressed(self) -> None:
        self._progress.set()
        self._progress = anyio.Event()

    async def _wait_progress(self, deadline: float) -> None:
        timeout = min(_POLL_S, deadline - time.monotonic())
        if timeout > 0:
            with anyio.move_on_after(timeout):
                await self._progress.wait()

    # --- remember --------------------------------------------------------------

    async def remember(
        self,
        owner: str,
        text: object,
        namespace: object = None,
        idempotency_key: object = None,
        wait_ms: object = 0,
        occurred_at: object = None,
    ) -> RememberOutcome:
        body = validation.text(text, self.settings.limits.max_text_bytes)
        lane = validation.namespace(namespace)
        key = validation.idempotency_key(idempotency_key)
        wait = validation.wait_ms(wait_ms)
        when = validation.instant(occurred_at, "occurred_at")
        job, replayed = await self._store.write(
            lambda writer: writer.insert_job(owner, lane, body, key, time.time(), when)
        )
        if replayed:
            differs = [
                name
                for name, same in (
                    ("text", job.text == body),
                    ("namespace", job.namespace == lane),
                    ("occurred_at", job.occurred_at == when),
                )
                if not same
            ]
            if differs:
                raise IdempotencyKeyReused(
                    f"idempotency_key {key!r} was already used for a different {differs[0]}; "
                    "use a new key for a new fact"
                )
        if not replayed:
            self.worker.wake()
        if wait and job.status == "queued":
            self.worker.hurry()
            job = (await self.status(owner, [job.id], wait))[0]
        return RememberOutcome(job, replayed)

    async def status(self, owner: str, job_ids: object, wait_ms: object = 0) -> list[Job]:
        """Jobs in the order asked. Unknown ids (including other owners') raise NotFound."""
        ids = validation.job_ids(job_ids)
        wait = validation.wait_ms(wait_ms)
        deadline = time.monotonic() + wait / 1000
        while True:
            found = await self._store.read(lambda reader: reader.jobs_by_id(owner, ids))
            missing = [i for i in ids if i not in found]
            if missing:
                raise NotFound(f"no job with id {missing[0]!r}")
            if all(job.status != "queued" for job in found.values()) or time.monotonic() >= deadline:
                return [found[i] for i in ids]
            self.worker.hurry()
            await self._wait_progress(deadline)

    # --- recall ----------------------------------------------------------------

    async def recall(
        self,
        owner: str,
        query: object,
        limit: object = None,
        namespace: object = None,
        min_score: object = None,
        since: object = None,
        until: object = None,
        prefer_recent: object = False,
    ) -> RecallResult:
        text = validation.query(query, self.settings.limits.max_query_bytes)
        count = validation.limit(limit, self.settings.recall.default_limit)
        scope = validation.namespace_scope(namespace)
        floor = validation.min_score(min_score)
        start, end = validation.period(since, until)
        if prefer_recent is None:
            prefer_recent = False
        if not isinstance(prefer_recent, bool):
            raise InvalidInput("prefer_recent must be true or false")

        lanes = await self._lanes(owner, scope)
        if not searchable(text):  # nothing to match, and a vector of it would "find" anything
            return RecallResult(text, count, scope, searchable=False)
        if not lanes:
            return RecallResult(text, count, scope)
        pending = await self._drain(lanes)
        embedder = await self.embedder.get()
        recall = self.settings.recall
        params = SearchParams(
            owner=owner,
            query=text,
            limit=count,
            min_score=floor,
            since=start,
            until=end,
            prefer_recent=prefer_recent,
            mode=recall.mode,
            dense_weight=recall.dense_weight,
            recency_half_life_days=recall.recency_half_life_days,
            min_relevance=recall.min_relevance,
            repeats_fold=self.settings.curation.enabled,
        )
        hits = await search(self._store, embedder, lanes, params, pending, self._unindexed)
        return RecallResult(text, count, scope, hits)

    async def _lanes(self, owner: str, scope: str) -> list[int]:
        return [
            lane.id
            for lane in await self._store.read(lambda reader: reader.owner_lanes(owner))
            if scope in ("*", lane.namespace)
        ]

    async def forget_matches(self, owner: str, query: object, limit: object, namespace: object) -> list[ForgetMatch]:
        """What `forget --query` erases: of a recall's hits, only those the query really names --
        sharing a content word with it, or close in meaning (cosine >= FORGET_MIN_COSINE); recall's
        own floor lets weakly related facts back-fill a reply, tolerable for reading but not for
        erasing. Each with every copy the hit stands for (live memories and queued jobs of the same
        normalized text in the searched namespaces), or the fact comes straight back."""
        result = await self.recall(owner, query, limit, namespace)
        named = [
            hit for hit in result.hits if hit.matched or (hit.cosine is not None and hit.cosine >= FORGET_MIN_COSINE)
        ]
        lanes = await self._lanes(owner, result.namespace)
        keys = [hit.key or norm_key(hit.text) for hit in named]
        copies = await self._store.read(lambda reader: reader.copies_of(owner, lanes, keys))
        matches: list[ForgetMatch] = []
        for hit in named:
            key = hit.key or norm_key(hit.text)
            ids = [hit.id, *(cid for cid, ckey, _ in copies if ckey == key and cid != hit.id)]
            matches.append(ForgetMatch(hit, tuple(ids)))
        return matches

    async def _drain(self, lanes: list[int]) -> bool:
        """Read-your-writes: wait briefly for the jobs queued in these lanes before this recall
        to be curated. True when some still are (the search then scores queued jobs itself).

        Polls cheap index lookups, not the queued texts: a backlog may hold megabytes."""
        mark = await self._store.read(lambda reader: reader.queued_mark(lanes))
        if mark is None:
            return False
        self.worker.hurry()
        deadline = time.monotonic() + self.settings.recall.read_your_writes_wait_ms / 1000
        while time.monotonic() < deadline:
            await self._wait_progress(deadline)
            if not await self._store.read(lambda reader: reader.queued_through(lanes, mark)):
                return False
        log.info("recall: remembered facts are not all curated yet; searching the queued text directly")
        return True

    # --- history ---------------------------------------------------------------

    async def history(self, owner: str, memory_id: object) -> History:
        return await self._store.read(_history, owner, validation.memory_id(memory_id))

    # --- forget, undo, list ------------------------------------------------------

    async def forget(self, owner: str, memory_id: object, retired_too: bool = False) -> ForgetOutcome:
        """`memory_id` may also be a remember job's id (a queued recall hit): see lifecycle.forget_memory.

        Erase a memory's content everywhere (body, revisions, source jobs, queued repeats of its
        text, the write-ahead log's older copies); keep a tombstone. A memory merged into another
        is refused unless `retired_too` (its text lives on in the merged body).

        When a reader's snapshot keeps the log from being emptied in time, the outcome says so
        (`wal_cleared`) and the database keeps retrying on a timer until the log is empty."""
        mid = validation.memory_id(memory_id)
        done = await self._store.write(lambda writer: writer.forget_memory(owner, mid, retired_too))
        if not done.wal_cleared:
            self._store.owe_erasure()
        if done.already:
            log.info("%s was already forgotten", mid)
        else:
            log.info("forgot %s (%d memories, %d jobs erased)", mid, len(done.memory_ids), done.jobs)
        memory = done.memory_ids[0] if done.memory_ids else mid
        return ForgetOutcome(memory, done.memory_ids, done.jobs, done.wal_cleared, done.already, done.via_job)

    async def undo(self, owner: str, memory_id: object) -> UndoOutcome:
        mid = validation.memory_id(memory_id)
        body, restored = await self._store.write(lambda writer: writer.undo_last_change(owner, mid))
        self.worker.wake()  # restored bodies need vectors
        return UndoOutcome(mid, body, restored)

    async def list(
        self, owner: str, namespace: object = None, cursor: object = None, limit: object = None, since: object = None
    ) -> MemoryPage:
        scope = validation.namespace_scope(namespace if namespace is not None else "*")
        count = validation.limit(limit, 20)
        position = validation.cursor(cursor)
        start = validation.instant(since, "since")
        where = None if scope == "*" else scope
        rows = await self._store.read(lambda reader: reader.list_memories(owner, where, position, start, count + 1))
        items = [
            MemoryItem(r.id, r.body, r.namespace, r.created_at, r.updated_at, r.occurred_at, r.occurrences)
            for r in rows[:count]
        ]
        more = len(rows) > count
        return MemoryPage(
            items, validation.make_cursor(rows[count - 1].created_at, rows[count - 1].id) if more else None
        )

    async def namespaces(self, owner: str) -> tuple[str, ...]:
        """The owner's namespaces (those anything was ever remembered in), sorted."""
        lanes = await self._store.read(lambda reader: reader.owner_lanes(owner))
        return tuple(sorted({lane.namespace for lane in lanes}))

    async def activity(self, owner: str, days: object = 30) -> Activity:
        """The owner's queue, remembers per day over the last `days` UTC days (today included) and
        curation decisions by kind, from the journal."""
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_ACTIVITY_DAYS:
            raise InvalidInput(f"days must be an integer from 1 to {MAX_ACTIVITY_DAYS}, got {validation.show(days)}")
        return await self._store.read(_activity, owner, days, time.time())

    # --- reindex -----------------------------------------------------------------

    async def reindex(
        self, batch_size: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int]:
        """Re-embed every live memory with the configured model; resumable. Returns (re-embedded, left to the worker).

        Searches keep using the old vectors until the switch at the end.
        """
        embedder = await self.embedder.get()
        if embedder is None:
            raise EmbeddingError(
                str(self.embedder.error) if self.embedder.error else "embeddings are disabled (model 'none')"
            )
        state = await self._store.write(lambda writer: writer.reindex_begin(embedder.model_id, embedder.dim))
        mark = state.last_rowid
        done = await self._store.read(lambda reader: reader.reindex_done_upto(mark))
        total = done + await self._store.read(lambda reader: reader.reindex_remaining(mark))
        while rows := await self._store.read(lambda reader: reader.reindex_batch(mark, batch_size)):
            vectors = await anyio.to_thread.run_sync(embedder.embed_documents, [body for _, _, body in rows])
            items = [(pk, lane, vector) for (pk, lane, _), vector in zip(rows, vectors)]
            mark = await self._store.write(lambda writer: writer.reindex_write(state, items))
            done += len(rows)
            total = max(total, done)  # memories added meanwhile
            if progress is not None:
                progress(done, total)
        result = await self._store.write(lambda writer: writer.reindex_finish(state))
        self.worker.wake()
        return result

    # --- stats -----------------------------------------------------------------

    async def stats(self) -> Stats:
        def read(reader: StoreReader) -> Stats:
            return Stats(
                reader.queue_counts(),
                reader.counters(),
                reader.vector_model(),
                self._store.location,
                reader.deferred_nomination_count(),
            )

        return await self._store.read(read)


def _history(reader: StoreReader, owner: str, memory_id: str) -> History:
    found = reader.memory_by_id(owner, memory_id)
    if found is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    row, status, into = found
    merged_from = reader.retired_into(owner, memory_id)
    revisions = reader.revisions(row.pk)
    jobs = reader.jobs_for_memories(owner, [memory_id, *merged_from])
    return History(
        row.id,
        row.namespace,
        row.body,
        status,
        into,
        row.created_at,
        row.updated_at,
        revisions,
        jobs,
        merged_from,
        row.occurred_at,
        row.occurrences,
    )


def _activity(reader: StoreReader, owner: str, days: int, now: float) -> Activity:
    today = datetime.fromtimestamp(now, tz=timezone.utc).date()
    first_day = today - timedelta(days=days - 1)
    first = datetime.combine(first_day, datetime.min.time(), tzinfo=timezone.utc).timestamp()
    per_day = [0] * days
    queue: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    for job in reader.iter_jobs(owner):  # one pass over the journal: no per-owner aggregate in the store yet
        queue[job.status] += 1
        if job.decision is not None:
            decisions[job.decision] += 1
        since_first = job.created_at - first
        if since_first >= 0:
            day = int(since_first // 86400)  # a UTC day is 86,400 s of epoch time
            if day < days:
                per_day[day] += 1
    labels = [(first_day + timedelta(days=n)).isoformat() for n in range(days)]
    return Activity(dict(queue), list(zip(labels, per_day)), dict(decisions))
