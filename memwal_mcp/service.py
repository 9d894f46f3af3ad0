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
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import anyio

from . import validation
from .config import Settings
from .curation.extract import MAX_FACTS, NotText, make_extractor
from .curation.llm import make_decider
from .curation.worker import CurationWorker
from .embedding import Embedder, LazyEmbedder
from .errors import EmbeddingError, IdempotencyKeyReused, InvalidInput, NotFound
from .normalize import norm_key
from .recall.format import fit
from .recall.lexical import searchable
from .recall.search import SearchParams, embedding_begun, search
from .recall.unindexed_vectors import UnindexedVectors
from .records import (
    ANALYZED,
    SUPERSEDED,
    AnalyzeOutcome,
    ForgetOutcome,
    History,
    Hit,
    Job,
    JobReport,
    MemoryItem,
    MemoryNow,
    MemoryPage,
    RecallResult,
    RememberOutcome,
    UndoOutcome,
)
from .store import Store, StoreReader, StoreWriter, open_store
from .store.records import Forgotten, JobRequest, KeyReused, StoredCopy, SupersedeRefused, SupersedeUnknown

log = logging.getLogger(__name__)

# How often a waiter re-reads job state when no in-process signal arrives
# (another process may be the one curating the lane).
_POLL_S = 0.05


# Meaning score (cosine with the query) from which forget --query erases a fact that shares no
# content word with the query. With the default model, facts about another topic reach 0.2-0.45
# ("quantum physics" vs "Alice takes the 8:15 train": 0.19); a paraphrase of the query, 0.6 and more.
FORGET_MIN_COSINE = 0.6

# The fields of one memwal_remember_many item.
_ITEM_FIELDS = ("text", "namespace", "idempotency_key", "occurred_at", "expires_at", "supersedes")
# Expired memories purge reads per round (it forgets them one by one, as forget does).
_PURGE_BATCH = 500


@dataclass(frozen=True, slots=True)
class ForgetTarget:
    """A stored copy `forget --query` erases (a memory -- live, expired or superseded -- or a
    queued job), and the recall hit that named its text."""

    copy: StoredCopy
    hit: Hit


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
        self._extractor = make_extractor(settings.llm)
        self._progress = anyio.Event()
        self._unindexed = UnindexedVectors()  # vectors of queued facts, kept across recalls
        self._worker_task: asyncio.Task[None] | None = None
        # What this service filed, for a command interrupted after it (see `filing`).
        self.filed: list[str] = []  # job ids, in the order they were filed
        self.filing = False  # a transaction filing jobs is under way: its commit may land or not

    @property
    def store(self) -> Store:
        """The store contract, for the commands that move whole stores (export, import, check,
        tokens): everything else goes through the service's own methods."""
        return self._store

    @property
    def erasure_kept(self) -> str:
        """Where copies of erased text remain after a forget whose `wal_cleared` is False, and
        what clears them (the backend's files say it: a -wal is SQLite's, VACUUM PostgreSQL's)."""
        return self._store.erasure_kept

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
        expires_at: object = None,
        supersedes: object = None,
    ) -> RememberOutcome:
        request = self._request(text, namespace, idempotency_key, occurred_at, expires_at, supersedes)
        (outcome,) = await self._file(owner, [request], validation.wait_ms(wait_ms))
        return outcome

    async def remember_many(self, owner: str, items: object, wait_ms: object = 0) -> list[RememberOutcome]:
        """Every item checked before anything is stored, then all filed in one transaction: a
        bad item, a key reused for another fact, or a memory it cannot supersede (two items
        naming one included) names its index and stores nothing."""
        listed = validation.items(items)
        requests: list[JobRequest] = []
        superseded_by: dict[str, int] = {}  # memory id -> the item that supersedes it
        for index, item in enumerate(listed):
            if not isinstance(item, dict):
                raise InvalidInput(f"items[{index}] must be an object with a text, got {validation.show(item)}")
            unknown = sorted(set(item) - set(_ITEM_FIELDS))
            if unknown:
                raise InvalidInput(
                    f"items[{index}].{unknown[0]} is not a field of an item; the fields are {', '.join(_ITEM_FIELDS)}"
                )
            try:
                requests.append(
                    self._request(
                        item.get("text"),
                        item.get("namespace"),
                        item.get("idempotency_key"),
                        item.get("occurred_at"),
                        item.get("expires_at"),
                        item.get("supersedes"),
                    )
                )
            except InvalidInput as exc:
                raise InvalidInput(f"items[{index}]: {exc}") from None
            for memory_id in requests[-1].supersedes:
                # One fact replaces a memory: a second would find it gone and be dropped unseen.
                if memory_id in superseded_by:
                    raise InvalidInput(
                        f"items[{index}]: supersedes names {memory_id!r}, which items[{superseded_by[memory_id]}]"
                        " already supersedes; nothing was stored"
                    )
                superseded_by[memory_id] = index
        wait = validation.wait_ms(wait_ms)
        try:
            return await self._file(owner, requests, wait)
        except KeyReused as exc:
            raise IdempotencyKeyReused(f"items[{exc.index}]: {exc}") from None
        except SupersedeUnknown as exc:
            raise NotFound(f"items[{exc.index}]: {exc}") from None
        except SupersedeRefused as exc:
            raise InvalidInput(f"items[{exc.index}]: {exc}") from None

    def _request(
        self,
        text: object,
        namespace: object,
        idempotency_key: object,
        occurred_at: object,
        expires_at: object,
        supersedes: object = None,
    ) -> JobRequest:
        return JobRequest(
            validation.namespace(namespace),
            validation.text(text, self.settings.limits.max_text_bytes),
            validation.idempotency_key(idempotency_key),
            validation.instant(occurred_at, "occurred_at"),
            validation.expiry(expires_at),
            validation.memory_ids(supersedes, "supersedes"),
        )

    async def _file(self, owner: str, requests: list[JobRequest], wait: int) -> list[RememberOutcome]:
        """The one way facts become jobs (remember, remember_many): one transaction, a replayed
        key checked against its request by the store, then optionally waiting for curation."""
        self.filing = True
        filed = await self._store.write(lambda writer: writer.insert_jobs(owner, requests, time.time()))
        self.filing = False
        self.filed += [job.id for job, replayed in filed if not replayed]
        return await self._outcomes(owner, filed, wait)

    async def _outcomes(self, owner: str, filed: list[tuple[Job, bool]], wait: int) -> list[RememberOutcome]:
        if any(not replayed for _, replayed in filed):
            self.worker.wake()
        queued = [job.id for job, _ in filed if job.status == "queued"]
        settled: dict[str, Job] = {}
        if wait and queued:
            self.worker.hurry()
            settled = await self._settle(owner, list(dict.fromkeys(queued)), wait)
        jobs = [settled.get(job.id, job) for job, _ in filed]
        now = await self._store.read(_memories_now, owner, jobs)
        here = self.settings.server.worker
        return [
            RememberOutcome(job, replayed, now.get(job.id), here)
            for job, (_, replayed) in zip(jobs, filed, strict=True)
        ]

    async def analyze(self, owner: str, text: object, namespace: object = None, wait_ms: object = 0) -> AnalyzeOutcome:
        """Ask the LLM for the facts in a conversation or passage, and remember each through
        curation. The source stays in the journal as the analyze request every fact names (so
        forgetting the request erases it). When extraction fails, the source is remembered
        whole, as one fact, and the outcome says why: nothing given is dropped."""
        body = validation.text(
            text,
            self.settings.limits.max_text_bytes,
            hint="give the conversation or passage to analyze",
            shorten="analyze it in parts",
        )
        lane = validation.namespace(namespace)
        wait = validation.wait_ms(wait_ms)
        if self._extractor is None:
            raise InvalidInput(
                "memwal_analyze needs an LLM: set [llm] base_url and model in the config file "
                "(MEMWAL_LLM__BASE_URL and MEMWAL_LLM__MODEL)"
            )
        found = await self._extractor.extract(body)
        if found.error is not None:
            outcomes = await self._file(owner, [JobRequest(lane, body)], wait)
            return AnalyzeOutcome(None, outcomes, f"extraction failed: {found.error}")
        facts: list[JobRequest] = []
        refusals: list[str] = []
        repeated = 0
        seen: set[str] = set()
        for number, item in enumerate(found.facts, start=1):
            if isinstance(item, NotText):
                refusals.append(f"fact {number} {item.why}")
                continue
            try:
                fact = validation.text(
                    item, self.settings.limits.max_text_bytes, name=f"fact {number}", hint="the LLM gave no text"
                )
            except InvalidInput as exc:
                refusals.append(str(exc))
                continue
            if norm_key(fact) in seen:
                repeated += 1
                continue
            seen.add(norm_key(fact))
            facts.append(JobRequest(lane, fact))
        if not facts and refusals:
            outcomes = await self._file(owner, [JobRequest(lane, body)], wait)
            error = "extraction failed: " + (
                "the one fact the LLM returned is no valid text"
                if len(refusals) == 1
                else f"none of the {len(refusals)} facts the LLM returned is a valid text"
            )
            return AnalyzeOutcome(None, outcomes, error, refusals=tuple(refusals))
        kept = facts[:MAX_FACTS]
        request, filed = await self._store.write(
            lambda writer: writer.insert_analysis(owner, lane, body, kept, time.time())
        )
        outcomes = await self._outcomes(owner, filed, wait)
        return AnalyzeOutcome(request, outcomes, None, len(facts) - len(kept), tuple(refusals), repeated)

    async def status(self, owner: str, job_ids: object, wait_ms: object = 0) -> list[Job]:
        """Jobs in the order asked. Unknown ids (including other owners') raise NotFound."""
        ids = validation.job_ids(job_ids)
        found = await self._settle(owner, ids, validation.wait_ms(wait_ms))
        return [found[i] for i in ids]

    async def report(self, owner: str, job_ids: object, wait_ms: object = 0) -> list[JobReport]:
        """`status`, with the facts of each analyze request among the jobs (which became no memory)."""
        jobs = await self.status(owner, job_ids, wait_ms)

        def read(reader: StoreReader) -> list[JobReport]:
            now = _memories_now(reader, owner, jobs)
            here = self.settings.server.worker
            return [JobReport(job, _request_facts(reader, owner, job), now.get(job.id), here) for job in jobs]

        return await self._store.read(read)

    async def _settle(self, owner: str, ids: list[str], wait: int) -> dict[str, Job]:
        """The jobs, once none is queued or `wait` ms have passed."""
        deadline = time.monotonic() + wait / 1000
        while True:
            found = await self._store.read(lambda reader: reader.jobs_by_id(owner, ids))
            missing = [i for i in ids if i not in found]
            if missing:
                raise NotFound(f"no job with id {missing[0]!r}")
            if all(job.status != "queued" for job in found.values()) or time.monotonic() >= deadline:
                return found
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
        include_expired: object = False,
        include_superseded: object = False,
        max_chars: object = None,
    ) -> RecallResult:
        text = validation.query(query, self.settings.limits.max_query_bytes)
        budget = validation.max_chars(max_chars)
        count = validation.limit(limit, self.settings.recall.default_limit)
        scope = validation.namespace_scope(namespace)
        floor = validation.min_score(min_score)
        start, end = validation.period(since, until)
        prefer_recent = validation.flag(prefer_recent, "prefer_recent")
        expired = validation.flag(include_expired, "include_expired")
        superseded = validation.flag(include_superseded, "include_superseded")

        if not searchable(text):  # nothing to match, and a vector of it would "find" anything
            return RecallResult(text, count, scope, searchable=False)
        # A model in memory embeds the query from the start; one not loaded yet loads only once
        # the recall finds memories to search.
        ready = self.embedder.loaded
        embedder = await self.embedder.get() if ready else None
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
            context_share=recall.context_share,
            context_gap_s=recall.context_gap_s,
            include_expired=expired,
            include_superseded=superseded,
        )
        # The query is embedded from here on, beside the reads before the search needs it.
        async with embedding_begun(params, embedder) as vector:
            # One reader call for the lanes and the read-your-writes mark: each hop to the reader
            # thread costs an idle recall more than the call itself.
            lanes, mark = await self._store.read(_lanes_and_mark, owner, scope)
            if not lanes:
                return RecallResult(text, count, scope)
            pending = await self._drain(lanes, mark)
            if not ready:
                embedder = await self._model_within(recall.model_wait_ms)
            hits = await search(self._store, embedder, lanes, params, pending, self._unindexed, vector)
        return fit(RecallResult(text, count, scope, hits), budget)

    async def _model_within(self, wait_ms: int) -> Embedder | None:
        """The model, if it loads within `wait_ms`: a model that must be downloaded, with no network,
        held every first recall 40 s while fastembed retried. The load goes on meanwhile."""
        with anyio.move_on_after(wait_ms / 1000):
            return await self.embedder.get()
        log.warning("recall: the embedding model is not loaded after %d ms; this recall matches words only", wait_ms)
        return None

    async def _lanes(self, owner: str, scope: str) -> list[int]:
        return await self._store.read(_scope_lanes, owner, scope)

    async def forget_matches(self, owner: str, query: object, limit: object, namespace: object) -> list[ForgetTarget]:
        """What `forget --query` erases: of a recall's hits, only those the query really names --
        sharing a content word with it, or close in meaning (cosine >= FORGET_MIN_COSINE); recall's
        own floor lets weakly related facts back-fill a reply, tolerable for reading but not for
        erasing. Expired and superseded memories are searched too: they still hold the text. Each
        hit with every copy it stands for (memories and queued jobs of the same normalized text in
        the searched namespaces), or the fact comes straight back. In the order to erase them
        (see _erase_order)."""
        result = await self.recall(owner, query, limit, namespace, include_expired=True, include_superseded=True)
        named = [
            hit for hit in result.hits if hit.matched or (hit.cosine is not None and hit.cosine >= FORGET_MIN_COSINE)
        ]
        lanes = await self._lanes(owner, result.namespace)
        keys = [hit.key or norm_key(hit.text) for hit in named]
        copies = await self._store.read(lambda reader: reader.copies_of(owner, lanes, keys))
        targets: list[ForgetTarget] = []
        for hit in named:
            key = hit.key or norm_key(hit.text)
            own = StoredCopy(hit.id, key, hit.text, hit.expires_at, hit.superseded_by)
            found = {c.id: c for c in copies if c.key == key}
            targets += [ForgetTarget(c, hit) for c in (found.pop(hit.id, own), *found.values())]
        return _erase_order(targets)

    async def _drain(self, lanes: list[int], mark: int | None) -> bool:
        """Read-your-writes: wait briefly for the jobs queued in these lanes before this recall
        (through `mark`, reader.queued_mark) to be curated. True when some still are (the search
        then scores queued jobs itself).

        Polls cheap index lookups, not the queued texts: a backlog may hold megabytes."""
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
        mid = validation.memory_id(memory_id)
        if mid.startswith("j_"):  # "no memory with id 'j_...'" would read as if the fact were lost
            raise InvalidInput(await self._store.read(_job_not_memory, owner, mid))
        return await self._store.read(_history, owner, mid)

    async def job(self, owner: str, job_id: object) -> tuple[Job, tuple[Job, ...]]:
        """A remember job of the owner's, and, when it is an analyze request (which keeps the source
        text), the fact jobs extracted from it: the dashboard's job page. Another owner's job is
        the NotFound memwal_remember_status answers."""
        if not isinstance(job_id, str) or not job_id.startswith("j_"):
            raise InvalidInput(f"job_id must be a job id such as 'j_0123456789abcdef', got {validation.show(job_id)}")
        (found,) = await self.status(owner, [job_id])
        facts = await self._store.read(lambda reader: reader.extracted_from(owner, found.id))
        return found, tuple(facts)

    # --- forget, undo, list ------------------------------------------------------

    async def forget(self, owner: str, memory_id: object, retired_too: bool = False) -> ForgetOutcome:
        """`memory_id` may also be a remember job's id (a queued recall hit): see store/lifecycle.forget.

        Erase a memory's content everywhere (body, revisions, source jobs, queued repeats of its
        text, the write-ahead log's older copies); keep a tombstone. A memory merged into another
        is refused unless `retired_too` (its text lives on in the merged body). The memories the
        erased ones had superseded are live again if those were current, as an undo of the
        supersede brings them back (`restored`; one past its expiry is no longer superseded but
        expired, `expired_back`): superseded by a memory that is gone, they would be in no recall. An erased memory that was
        superseded itself hands them to the one that superseded it (one chain, one current fact).

        When a reader's snapshot keeps the log from being emptied in time, the outcome says so
        (`wal_cleared`) and the database keeps retrying on a timer until the log is empty."""
        mid = validation.memory_id(memory_id)
        done, extracted, sources = await self._store.write(lambda writer: _forget(writer, owner, mid, retired_too))
        if not done.wal_cleared:
            self._store.owe_erasure()
        if done.already:
            log.info("%s was already forgotten", mid)
        else:
            log.info("forgot %s (%d memories, %d jobs erased)", mid, len(done.memory_ids), done.jobs)
        if done.restored:
            log.info("%s live again: %s had superseded them", ", ".join(done.restored), mid)
            self.worker.wake()  # brought back without a vector, as by an undo
        memory = done.memory_ids[0] if done.memory_ids else mid
        return ForgetOutcome(
            memory,
            done.memory_ids,
            done.jobs,
            done.wal_cleared,
            done.already,
            done.via_job,
            done.restored,
            expired_back=done.expired_back,
            extracted=extracted,
            sources=sources,
            disk_copies=self._store.erasure_left(done.wal_cleared, done.already),
        )

    async def undo(self, owner: str, memory_id: object) -> UndoOutcome:
        """An undo that would change nothing is an InvalidInput naming why (never a success)."""
        mid = validation.memory_id(memory_id)
        done = await self._store.write(lambda writer: writer.undo_last_change(owner, mid))
        self.worker.wake()  # restored bodies need vectors
        return UndoOutcome(mid, done.body, list(done.restored), list(done.superseded_again), list(done.folded_again))

    async def expired(self, owner: str) -> list[str]:
        """Ids of the owner's memories expired by now: what `purge --expired` erases."""
        now = time.time()
        return await self._store.read(lambda reader: reader.expired_memories(owner, now, _PURGE_BATCH))

    async def purge_expired(self, owner: str) -> list[ForgetOutcome]:
        """Forget every expired memory of the owner, as forget does (text gone, tombstones kept;
        what an erased one superseded is no longer superseded: live again, or expired)."""
        done: list[ForgetOutcome] = []
        while ids := await self.expired(owner):
            for memory_id in ids:
                done.append(await self.forget(owner, memory_id))
        return done

    async def list(
        self,
        owner: str,
        namespace: object = None,
        cursor: object = None,
        limit: object = None,
        since: object = None,
        include_expired: object = False,
        include_superseded: object = False,
        until: object = None,
    ) -> MemoryPage:
        """memwal_list, and the dashboard's Browse: the same options, walls and errors. Expired and
        superseded memories are left out, listed too (`True`) or the only ones listed ("only")."""
        scope = validation.namespace_scope(namespace if namespace is not None else "*")
        count = validation.limit(limit, 20)
        position = validation.cursor(cursor)
        start, end = validation.period(since, until)
        expired = validation.shown(include_expired, "include_expired")
        superseded = validation.shown(include_superseded, "include_superseded")
        now = time.time()
        where = None if scope == "*" else scope
        rows = await self._store.read(
            lambda reader: reader.list_memories(
                owner,
                where,
                position,
                start,
                count + 1,
                now if expired == "hide" else None,
                superseded != "hide",
                end,
                now if expired == "only" else None,
                superseded == "only",
            )
        )
        items = [
            MemoryItem(
                r.id,
                r.body,
                r.namespace,
                r.created_at,
                r.updated_at,
                r.occurred_at,
                r.occurrences,
                r.expires_at,
                r.superseded_by,
            )
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

    async def healthy(self, timeout_s: float) -> None:
        """Raise unless the store answers a read within `timeout_s`: what a load balancer's health
        check asks (a replica whose database is unreachable must leave the rotation)."""
        await self._store.ping(timeout_s)

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


def _erase_order(targets: list[ForgetTarget]) -> list[ForgetTarget]:
    """A superseded memory before the memory that replaced it, when both are to be erased:
    erased after it, the erasure of its replacement would first bring it back live (and say so).
    Otherwise in the order given."""
    replaced_by = {t.copy.id: t.copy.superseded_by for t in targets}

    def replacements(memory_id: str) -> int:  # how many of the targets replaced it, one after another
        count, seen = 0, {memory_id}
        while (by := replaced_by.get(memory_id)) is not None and by in replaced_by and by not in seen:
            count, memory_id = count + 1, by
            seen.add(by)
        return count

    return sorted(targets, key=lambda t: -replacements(t.copy.id))


def _forget(
    writer: StoreWriter, owner: str, memory_id: str, retired_too: bool
) -> tuple[Forgotten, tuple[str, ...] | None, tuple[str, ...]]:
    """The forget, and what of the text it leaves in analyze requests, read by the same writer:
    when the id names an analyze request (whose source text is what goes), the facts extracted
    from it that stay remembered; when it names a fact extracted from one, the requests that
    still hold the conversation the fact was in (forgetting the fact does not erase them)."""
    extracted = None
    if memory_id.startswith("j_"):
        request = writer.jobs_by_id(owner, [memory_id]).get(memory_id)
        if request is not None and request.decision == ANALYZED:
            extracted = _request_facts(writer, owner, request)
    done = writer.forget_memory(owner, memory_id, retired_too)
    if extracted is not None or done.already:
        return done, extracted, ()
    return done, extracted, _sources_kept(writer, owner, memory_id, done.memory_ids)


def _scope_lanes(reader: StoreReader, owner: str, scope: str) -> list[int]:
    """The owner's lanes a namespace scope covers ("*": all of them)."""
    return [lane.id for lane in reader.owner_lanes(owner) if scope in ("*", lane.namespace)]


def _lanes_and_mark(reader: StoreReader, owner: str, scope: str) -> tuple[list[int], int | None]:
    """The scope's lanes and the last job queued in them (None: nothing is queued)."""
    lanes = _scope_lanes(reader, owner, scope)
    return lanes, reader.queued_mark(lanes) if lanes else None


def _job_not_memory(reader: StoreReader, owner: str, job_id: str) -> str:
    """Why a job id is not a history's id, and which id is: the memory the job became, or for an analyze
    request (which becomes none), those of its facts."""
    job = reader.jobs_by_id(owner, [job_id]).get(job_id)
    facts = _request_facts(reader, owner, job) if job is not None else None
    if facts is None:
        return (
            f"memory_id {job_id!r} is a remember job's id, not a memory's: memwal_remember_status "
            "names the memory it became; give that id"
        )
    kept = (
        f"the facts extracted from it are {', '.join(facts)}; give one of those"
        if facts
        else "none of its facts is kept"
    )
    return f"memory_id {job_id!r} is an analyze request's id: it becomes no memory itself; {kept}"


def _memories_now(reader: StoreReader, owner: str, jobs: Sequence[Job]) -> dict[str, MemoryNow]:
    """For each done job whose memory is kept (live, superseded or expired; not merged away or forgotten),
    what that memory holds now."""
    found: dict[str, MemoryNow | None] = {}
    for memory_id in {job.memory_id for job in jobs if job.status == "done" and job.memory_id is not None}:
        row = reader.memory_by_id(owner, memory_id)
        found[memory_id] = (
            MemoryNow(row[0].expires_at) if row is not None and row[1] in ("live", "superseded") else None
        )
    return {job.id: now for job in jobs if job.memory_id is not None and (now := found.get(job.memory_id)) is not None}


def _request_facts(reader: StoreReader, owner: str, job: Job) -> tuple[str, ...] | None:
    """When `job` is an analyze request, the facts extracted from it that stay remembered (memory ids; job
    ids of those still queued); None for any other job. A request whose source text was forgotten reads as
    any job forgotten before it was curated, so it is known by the facts that name it (one that gave no
    fact leaves no trace of having been a request)."""
    if job.decision == ANALYZED:
        facts = reader.extracted_from(owner, job.id)
    elif job.decision == "forgotten" and job.memory_id is None and job.source_job_id is None:
        facts = reader.extracted_from(owner, job.id)
        if not facts:
            return None
    else:
        return None
    return tuple(dict.fromkeys(fact.memory_id or fact.id for fact in facts if fact.decision != "forgotten"))


def _sources_kept(writer: StoreWriter, owner: str, asked: str, erased: tuple[str, ...]) -> tuple[str, ...]:
    """The analyze requests the erased jobs were extracted from whose source text is still kept.
    An erased job keeps its memory id and source (only its text goes), so they are read after."""
    jobs = writer.jobs_for_memories(owner, erased)
    if asked.startswith("j_"):  # a queued fact, erased before it became a memory
        jobs += list(writer.jobs_by_id(owner, [asked]).values())
    named = list(dict.fromkeys(job.source_job_id for job in jobs if job.source_job_id is not None))
    requests = writer.jobs_by_id(owner, named)
    return tuple(rid for rid in named if rid in requests and requests[rid].decision == ANALYZED)


def _history(reader: StoreReader, owner: str, memory_id: str) -> History:
    found = reader.memory_by_id(owner, memory_id)
    if found is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    row, status, into = found
    replacement = reader.memory_by_id(owner, row.superseded_by) if row.superseded_by is not None else None
    undo_restores = False
    if status == "superseded" and replacement is not None and replacement[1] == "live":
        last = reader.revisions(replacement[0].pk)[:1]  # undo undoes only the last change
        undo_restores = bool(last) and last[0].decision == SUPERSEDED and row.id in last[0].merged_ids
    # A queued correction supersedes a live memory already as recall and list read it (shown.py).
    pending = reader.memories_by_pk([row.pk]).get(row.pk) if status == "live" else None
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
        row.expires_at,
        row.superseded_by,
        reader.superseded_by(owner, memory_id),
        row.occurred_at,
        # A forgotten memory is a tombstone: its repeats went with its text (an import of the
        # tombstone cannot know them either).
        row.occurrences if status != "forgotten" else 0,
        replacement[1] if replacement is not None else None,
        undo_restores,
        pending.superseded_by if pending is not None else None,
        (replacement[0].superseded_by or replacement[2]) if replacement is not None else None,
        replacement[0].expires_at if replacement is not None else None,
    )


def _activity(reader: StoreReader, owner: str, days: int, now: float) -> Activity:
    today = datetime.fromtimestamp(now, tz=timezone.utc).date()
    first_day = today - timedelta(days=days - 1)
    first = datetime.combine(first_day, datetime.min.time(), tzinfo=timezone.utc).timestamp()
    per_day = [0] * days
    queue: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    for group in reader.journal_counts(owner, first):  # a UTC day is 86,400 s of epoch time
        queue[group.status] += group.count
        if group.decision is not None:
            decisions[group.decision] += group.count
        if group.day is not None and group.day < days:
            per_day[group.day] += group.count
    labels = [(first_day + timedelta(days=n)).isoformat() for n in range(days)]
    return Activity(dict(queue), list(zip(labels, per_day)), dict(decisions))
