"""Find the best distinct facts for a query in one or more lanes, back-filling after collapse.

Candidates come from vector kNN and FTS5 BM25 (both per lane, live memories only).
Each candidate gets both signals -- its cosine with the query (from its stored
vector) and its BM25 strength -- and one score in [0, 1]:

    dense    score = cosine (clipped to [0, 1])
    lexical  score = s / s_max * min(1, len / avg_len)
             s = the text match's strength (BM25); s_max = the lane's ceiling for the query (the
             BM25 of a memory holding every query term at a saturating frequency: (k1 + 1) x the
             terms' idf); len = the text's length in characters, avg_len = the mean of the lane's memories
    hybrid   score = w * dense + (1 - w) * lexical, w = `dense_weight`, then for conversation
             turns, context from the turn before (_in_context; `context_share`)

The length factor discounts word matches in texts shorter than is usual in the
lane: BM25 rewards a short text that shares one rare word with the query far more
than a longer text that says the same and more ("How was the wedding?" against
the turn that tells what happened at it). On the development set it lifts hybrid
above both dense and lexical at k = 5 and 10 (benchmarks/README.md).

A memory's score depends on the query and on its own namespace only (the BM25 statistics
and the mean length are its lane's): what the owner keeps in other namespaces never moves
it, and with `namespace="*"` each memory scores as it does when its namespace is recalled
alone. `min_score` filters on it.
After collapsing duplicates the search widens (k x4) until it holds `limit` distinct *relevant*
facts and no memory outside its pools could outscore the limit-th (each pool is cut by one
signal alone: BM25 favours short texts that the length factor then discounts), or every
source is exhausted. Relevant, without `min_score`: the fact
shares a content word with the query (a word match) or scores at least `min_relevance`
-- back-fill must not pad a reply with whatever happens to be stored.

Facts outside the indexes are scored here by the same formula: queued jobs (read-your-
writes; their word score is BM25 over the statistics the index will have once they
are in it, store/unindexed_fts.py; the memories already there keep the statistics they have
now, so a waiting job never moves their scores) and memories still waiting for a vector. Each recall
embeds at most a few such texts itself; the others are matched by words until their
vectors are cached or curation has indexed them.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Literal

import anyio
import numpy as np

from ..concurrently import side_by_side
from ..embedding import Embedder, readable
from ..errors import EmbeddingError
from ..records import Hit
from ..store import Store, StoreReader, VectorMatch, VectorSearch
from ..store.records import KeyCopies, MemoryRow, QueuedJob, QueuedText
from .collapse import group_duplicates, survivor
from .lexical import STOPWORDS, content_terms, has_content_word
from .unindexed_vectors import UnindexedVectors

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "dense", "lexical"]
# sqlite-vec's largest k for one KNN query.
MAX_K = 4096
# Memories without a vector a recall looks at, per lane.
MAX_UNINDEXED = 256
# Queued text a recall reads for read-your-writes, shared fairly between the lanes (newest
# first in each): its words are matched in one scratch FTS5 table (~80 MB/s here).
MAX_QUEUED_CHARS = 8_000_000
MAX_QUEUED_JOBS = 50_000
# Texts outside the indexes a recall embeds itself, per call: each long one costs tens of ms
# beside a busy worker (256 long queued facts took 23-37 s). Vectors already cached are free.
EMBED_TEXTS = 32
EMBED_CHARS = 16_000
# Context (_in_context): a turn with this many content words or more says enough on its own;
# the turns right after this many best candidates join the pool; what marks a question.
CONTEXT_WORDS = 12
CONTEXT_NEXT = 10
# Only a lane's best candidates are read in context (reading all ~200 cost 2-5 ms a recall):
# one further down would need a predecessor far above it to reach the first hits.
CONTEXT_POOL = 40
QUESTION_MARKS = "?？؟"
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SearchParams:
    owner: str
    query: str
    limit: int
    min_score: float | None = None
    since: float | None = None
    until: float | None = None
    prefer_recent: bool = False
    mode: Mode = "hybrid"
    dense_weight: float = 0.5
    recency_half_life_days: float = 30.0
    min_relevance: float = 0.0  # without min_score: the least score of a fact that shares no query word
    repeats_fold: bool = True  # curation folds a repeat of a memory's normalized text into it
    context_share: float = 0.0  # hybrid: how far a turn rises towards the one before it (see _in_context)
    context_gap_s: float = 1800.0  # the most time between two turns of one conversation
    include_expired: bool = False  # memories (and queued facts) past their expires_at are hits too
    include_superseded: bool = False  # memories another fact superseded are scored too (they left the indexes)


@dataclass(frozen=True, slots=True)
class _Candidate:
    row: MemoryRow
    cosine: float | None
    strength: float | None


@dataclass(frozen=True, slots=True)
class _Scored:
    """A scored memory (its row) or queued fact (its hit as read). The Hit of a memory is made
    only once it is chosen: a recall scores ~130 candidates and returns a handful, and making a
    frozen Hit for each was a fifth of the search's time after the query embedding."""

    of: MemoryRow | Hit
    score: float  # relevance, weighted by recency when asked (prefer_recent)
    relevance: float  # before any recency weighting
    matched: bool  # shares a content word with the query
    cosine: float | None  # the one a hit keeps (dense signals only)
    occurred_at: float | None  # its own, or the date of a repeat inside since/until (_in_window)

    @property
    def id(self) -> str:
        return self.of.id

    @property
    def text(self) -> str:
        return self.of.body if isinstance(self.of, MemoryRow) else self.of.text

    @property
    def key(self) -> str | None:
        return self.of.norm_key if isinstance(self.of, MemoryRow) else self.of.key

    @property
    def pending(self) -> bool:
        return not isinstance(self.of, MemoryRow) and self.of.pending

    @property
    def superseded_by(self) -> str | None:
        return self.of.superseded_by

    @property
    def expires_at(self) -> float | None:
        return self.of.expires_at

    @property
    def when(self) -> float:
        return self.occurred_at if self.occurred_at is not None else self.of.created_at

    @property
    def stored(self) -> int:
        """The memory's place in the order memories were stored (0 for a queued fact)."""
        return self.of.pk if isinstance(self.of, MemoryRow) else 0

    def expired(self, now: float) -> bool:
        return self.of.expired(now)

    def hit(self) -> Hit:
        if isinstance(self.of, Hit):
            return replace(
                self.of, score=self.score, matched=self.matched, cosine=self.cosine, occurred_at=self.occurred_at
            )
        row = self.of
        return Hit(
            row.id,
            row.body,
            self.score,
            row.namespace,
            row.created_at,
            row.updated_at,
            occurred_at=self.occurred_at,
            key=row.norm_key,
            expires_at=row.expires_at,
            superseded_by=row.superseded_by,
            matched=self.matched,
            cosine=self.cosine,
        )


@dataclass(frozen=True, slots=True)
class _WordsFirst:
    """What the reader finds before the query vector exists."""

    lexical: tuple[dict[int, float], bool]
    known: dict[int, MemoryRow]
    waiting: list[MemoryRow]  # memories without a vector yet
    waiting_strength: dict[int, float]
    queued: list[QueuedJob]
    queued_strength: list[float | None]
    queued_keys: list[str]
    added: dict[int, tuple[int, int]]  # lane -> (memories, characters) the queued jobs add once curated
    ceilings: dict[int, float]  # lane -> the most strength a memory of it could have, the queue in
    indexed_ceilings: dict[int, float]  # the same over the lane's statistics as they are
    totals: dict[int, tuple[int, int]]  # lane -> its live memories and their characters (see _prepare)
    searches: list[VectorSearch] | None  # one kNN function per lane, once vectors exist


def check_dimension(reader: StoreReader, embedder: Embedder) -> bool:
    """True when vectors exist to search; refuse a model of another dimension."""
    stored = reader.vector_model()
    if stored is None:
        return False
    model_id, dim = stored
    if dim != embedder.dim:
        raise EmbeddingError(
            f"this database's vectors were built with {model_id!r} ({dim} dimensions) and cannot be "
            f"searched with {embedder.model_id!r} ({embedder.dim} dimensions). Configure the original "
            "model (MEMWAL_EMBEDDING__MODEL) or use another database (MEMWAL_DB_PATH)."
        )
    return True


def _lexical(reader: StoreReader, lanes: Sequence[int], terms: Sequence[str], k: int) -> tuple[dict[int, float], bool]:
    """Up to k text matches in the lanes: (pk -> strength, True when there were no more)."""
    if not terms:
        return {}, True
    found, exhausted = reader.text_search(lanes, terms, k)
    return dict(found), exhausted


def _words_first(
    reader: StoreReader,
    lanes: Sequence[int],
    terms: list[str],
    k: int,
    unindexed: bool,
    pending: bool,
    repeats_fold: bool,
    superseded: bool,
    embedder: Embedder | None,
) -> _WordsFirst:
    """Everything the search reads before the query vector exists, in one reader call (it runs
    while another thread embeds the query): what _prepare reads, the word search and the rows
    of its hits; when vectors are searched, the memories still waiting for one; for
    read-your-writes, the queued jobs with their word scores; with `superseded`, the
    superseded memories (outside both indexes) like the waiting ones."""
    totals, searches = _prepare(reader, lanes, embedder)
    ranks, exhausted = _lexical(reader, lanes, terms, k)
    waiting = [row for lane in lanes for row in reader.unembedded_in_lane(lane, MAX_UNINDEXED)] if unindexed else []
    waiting_strength = reader.text_strengths(lanes, terms, [row.pk for row in waiting]) if waiting and terms else {}
    if superseded and (replaced := reader.superseded_in(lanes, MAX_UNINDEXED)):
        words = reader.score_queued(lanes, terms, [QueuedText(row.body, row.lane) for row in replaced], False)
        waiting += replaced
        waiting_strength.update({row.pk: s for row, s in zip(replaced, words.strengths) if s is not None})
    queued = reader.queued_fairly(lanes, MAX_QUEUED_CHARS, MAX_QUEUED_JOBS) if pending else []
    scored = reader.score_queued(
        lanes,
        terms,
        [QueuedText(job.text, job.lane_id) for job in queued],
        repeats_fold,
    )
    # No text queued: the two sets of statistics are one.
    indexed = reader.score_queued(lanes, terms, [], repeats_fold).ceilings if queued and terms else scored.ceilings
    return _WordsFirst(
        (ranks, exhausted),
        reader.memories_by_pk(list(ranks)),
        waiting,
        waiting_strength,
        queued,
        scored.strengths,
        scored.keys,
        scored.added,
        scored.ceilings,
        indexed,
        totals,
        searches,
    )


def _prepare(
    reader: StoreReader, lanes: Sequence[int], embedder: Embedder | None
) -> tuple[dict[int, tuple[int, int]], list[VectorSearch] | None]:
    """What the search proper starts from: each lane's live memories and their characters (for
    the word score's length factor) and, once vectors exist, one kNN function per lane."""
    totals = reader.lane_totals(lanes)
    indexed = embedder is not None and check_dimension(reader, embedder)
    return totals, [reader.vector_search(lane) for lane in lanes] if indexed else None


def _candidates(
    reader: StoreReader,
    lanes: Sequence[int],
    query_vector: np.ndarray | None,
    ranks: dict[int, float],
    nearest: _Nearest | None,
    known: dict[int, MemoryRow] | None = None,
) -> list[_Candidate]:
    """The kNN hits (`nearest`) joined with the word matches, each with both signals."""
    cosines = dict(nearest.cosines) if nearest is not None else {}
    known = known or {}
    rows = {**known, **reader.memories_by_pk(list((cosines.keys() | ranks.keys()) - known.keys()))}
    # Only the lanes asked for, whatever an index returned (a backend may trust its own counts).
    wanted = set(lanes)
    rows = {rowid: row for rowid, row in rows.items() if row.lane in wanted}
    if query_vector is not None:  # word matches that kNN did not reach: their cosine too
        missing: dict[int, list[int]] = {}
        for rowid in ranks:
            if rowid not in cosines and rowid in rows:
                missing.setdefault(rows[rowid].lane, []).append(rowid)
        for lane, rowids in missing.items():
            cosines.update(reader.cosines(lane, query_vector, rowids))
    return [_Candidate(row, cosines.get(rowid), ranks.get(rowid)) for rowid, row in rows.items()]


@dataclass(frozen=True, slots=True)
class _Nearest:
    found: dict[int, list[VectorMatch]]  # lane -> its k nearest, best first
    cosines: dict[int, float]  # pk -> cosine, the k nearest of each lane
    frontier: dict[int, float]  # lane -> its k-th cosine, for the lanes that have more beyond it

    @classmethod
    def of(cls, found: dict[int, list[VectorMatch]], k: int) -> _Nearest:
        cosines = {match.pk: match.cosine for matches in found.values() for match in matches}
        return cls(found, cosines, {lane: matches[-1].cosine for lane, matches in found.items() if len(matches) >= k})

    @property
    def exhausted(self) -> bool:
        return not self.frontier


def _nearest(
    lanes: Sequence[int],
    searches: Sequence[VectorSearch],
    query_vector: np.ndarray,
    k: int,
    exact: frozenset[int] = frozenset(),
    before: _Nearest | None = None,
) -> _Nearest:
    """Each lane's k nearest; the lanes in `exact` scanned exactly. With `before`, only those
    are searched again and the other lanes keep its answer."""
    found = dict(before.found) if before is not None else {}
    for lane, search_lane in zip(lanes, searches):
        if before is None or lane in exact:
            found[lane] = search_lane(query_vector[None], k, exact=lane in exact)[0]
    return _Nearest.of(found, k)


# A cosine computed for a word match may differ from the kNN's own for the same vector by
# rounding (SQLite rescores heads in a rotated basis); only more than this is a miss.
_MISS_MARGIN = 1e-4


def _doubted(nearest: _Nearest, candidates: Sequence[_Candidate], limit: int) -> frozenset[int]:
    """The lanes whose approximate kNN answer is contradicted by what the word search found: a
    memory of the lane outside that answer whose cosine beats the answer's limit-th. An HNSW
    graph can miss a region of the lane entirely (at 100k on PostgreSQL, one or two questions
    in 100 got ten wrong neighbours: benchmarks/README.md); the word matches' cosines are
    computed anyway, so checking them costs nothing, and the lane is then searched exactly
    (contract.VectorSearch). A miss among memories sharing no word with the query goes
    unseen here."""
    doubted: set[int] = set()
    for c in candidates:
        lane = c.row.lane
        matches = nearest.found.get(lane)
        if c.cosine is None or lane not in nearest.frontier or not matches or c.row.pk in nearest.cosines:
            continue
        if c.cosine > matches[min(limit, len(matches)) - 1].cosine + _MISS_MARGIN:
            doubted.add(lane)
    return frozenset(doubted)


@dataclass(frozen=True, slots=True)
class _LaneStatistics:
    """What the word score compares a text with, per lane: the lane's ceiling for the query and
    its mean body length -- its own namespace only."""

    ceilings: dict[int, float]
    average_length: dict[int, float]

    def share(self, strength: float, lane: int) -> float:
        ceiling = self.ceilings.get(lane, 0.0)
        return min(1.0, strength / ceiling) if ceiling > 0 else 0.0


def _average_lengths(totals: dict[int, tuple[int, int]], added: dict[int, tuple[int, int]]) -> dict[int, float]:
    """Each lane's mean body length, with `added` (memories, characters) counted in."""
    averages: dict[int, float] = {}
    for lane in totals.keys() | added.keys():
        rows, chars = totals.get(lane, (0, 0))
        more_rows, more_chars = added.get(lane, (0, 0))
        count = rows + more_rows
        averages[lane] = (chars + more_chars) / count if count else 0.0
    return averages


class _Scorer:
    def __init__(
        self,
        params: SearchParams,
        indexed: _LaneStatistics,
        queued: _LaneStatistics,
        dense: bool,
        lexical: bool,
        now: float,
        content_word: bool,
    ) -> None:
        self.p = params
        # A memory is scored over its lane's statistics as they are; a queued fact over those
        # its lane will have once the queue is in (what it will score as a memory). Scoring
        # the memories over the projected figures would move them while a job waits.
        self.indexed = indexed
        self.queued = queued
        self.dense = dense
        self.lexical = lexical
        self.now = now
        self.content_word = content_word  # a word match means the fact shares a content word

    def bound(self, lanes: Sequence[int], nearest: _Nearest | None, strength: float | None) -> float:
        """The most any memory the pools have not reached yet could score: its cosine is at most
        its lane's k-th nearest (none beyond an exhausted lane), its word strength at most the
        weakest match fetched (none when the word matches are exhausted), and the length factor
        at most 1. Once the limit-th distinct fact scores at least this, a wider pool cannot
        change the answer."""
        best = 0.0
        for lane in lanes:
            front = nearest.frontier.get(lane) if self.dense and nearest is not None else None
            share = self.indexed.share(strength, lane) if self.lexical and strength is not None else 0.0
            best = max(best, self(front, share))
        return best

    def __call__(self, cosine: float | None, lexical: float) -> float:
        dense = min(1.0, max(0.0, cosine)) if cosine is not None else 0.0
        if self.dense and self.lexical:
            score = self.p.dense_weight * dense + (1 - self.p.dense_weight) * lexical
        else:
            score = dense if self.dense else lexical
        return score

    def score(self, of: Hit, lane: int, cosine: float | None, strength: float | None) -> _Scored:
        """A queued fact (its hit as read), over the statistics its lane will have once the
        queue is in."""
        return self._scored(of, lane, len(of.text), cosine, strength, self.queued)

    def score_rows(self, found: Iterable[_Candidate]) -> list[tuple[int, _Scored]]:
        """(pk, scored) of each memory, over its lane's statistics as they are."""
        indexed = self.indexed
        return [
            (c.row.pk, self._scored(c.row, c.row.lane, len(c.row.body), c.cosine, c.strength, indexed)) for c in found
        ]

    def _scored(
        self,
        of: MemoryRow | Hit,
        lane: int,
        length: int,
        cosine: float | None,
        strength: float | None,
        stats: _LaneStatistics,
    ) -> _Scored:
        """Both signals and the score (see the module docstring). A recall scores ~130
        candidates: the steps are few calls, the time after the query embedding is short."""
        lexical = 0.0
        if self.lexical and strength is not None:
            average = stats.average_length.get(lane, 0.0)
            lexical = stats.share(strength, lane) * (min(1.0, length / average) if average > 0 else 1.0)
        relevance = self(cosine, lexical)
        return _Scored(
            of,
            self.recency(relevance, of) if self.p.prefer_recent else relevance,
            relevance,
            self.lexical and self.content_word and strength is not None,
            cosine if self.dense else None,
            of.occurred_at,
        )

    def rescored(self, scored: _Scored, relevance: float, occurred_at: float | None = None) -> _Scored:
        """The same fact with another relevance (context), or dated by a repeat (_in_window)."""
        when = scored.occurred_at if occurred_at is None else occurred_at
        score = self.recency(relevance, scored.of, when)
        return replace(scored, score=score, relevance=relevance, occurred_at=when)

    @property
    def in_context(self) -> bool:
        """Whether turns borrow from the turn before them: hybrid only (dense and lexical are
        the single signals, kept pure to compare with)."""
        return self.dense and self.lexical and self.p.context_share > 0

    def recency(self, relevance: float, of: MemoryRow | Hit, occurred_at: float | None = None) -> float:
        """The score: relevance, weighted by the fact's age when prefer_recent is asked."""
        if not self.p.prefer_recent:
            return relevance
        when = occurred_at if occurred_at is not None else of.occurred_at
        age_days = max(0.0, self.now - (when if when is not None else of.created_at)) / 86400
        decay = math.pow(0.5, age_days / self.p.recency_half_life_days)
        return relevance * (0.5 + 0.5 * decay)

    def floor(self, words_left: bool) -> float:
        """The least score a fact not found yet would need to be kept: with words left to find,
        a word match is kept whatever its score (unless min_score says otherwise)."""
        if self.p.min_score is not None:
            return self.p.min_score
        if words_left and self.lexical and self.content_word:
            return 0.0
        return self.p.min_relevance

    def keeps(self, scored: _Scored) -> bool:
        """min_score when the caller gave one; else relevant: a word match, or a score that
        clears the relevance floor."""
        if self.p.min_score is not None:
            return scored.score >= self.p.min_score
        return scored.matched or scored.relevance >= self.p.min_relevance

    def current(self, fact: _Scored) -> bool:
        """Not expired by now, unless expired facts were asked for; not being superseded by a
        queued job (the store marks such a live memory, as it marks a superseded one), unless
        superseded facts were."""
        if not (self.p.include_superseded or fact.superseded_by is None):
            return False
        return self.p.include_expired or fact.expires_at is None or fact.expires_at > self.now

    @property
    def windowed(self) -> bool:
        return self.p.since is not None or self.p.until is not None

    def in_window(self, when: float) -> bool:
        return (self.p.since is None or when >= self.p.since) and (self.p.until is None or when <= self.p.until)


def _rank(fact: _Scored) -> tuple[float, bool, float, int, str]:
    """Best score first; among equal scores (common for word matches: BM25 ties on texts of
    one length) a curated memory before a queued copy of it, then the newer fact, then the one
    stored later (one remember_many stores many in the same instant), then the id -- never the
    order an index happened to return, nor the random id alone: two stores of the same facts,
    on either backend, rank them alike. (`pending`, `when` and `stored` read here without their
    properties: a recall ranks ~130 facts.)"""
    of = fact.of
    when = fact.occurred_at if fact.occurred_at is not None else of.created_at
    if isinstance(of, MemoryRow):
        return (-fact.score, False, -when, -of.pk, of.id)
    return (-fact.score, of.pending, -when, 0, of.id)


class QueryVector:
    """The query's embedding, begun on a worker thread as soon as the recall knows its query, so
    that it runs beside everything read before the search needs it (the lanes, the word
    search): at 2,000 memories the embedding is most of an idle recall. None from `get` for a
    query the model cannot read (its words are all there is)."""

    def __init__(self, embedder: Embedder, query: str) -> None:
        self._embedder, self._query = embedder, query
        self._done = anyio.Event()
        self._vector: np.ndarray | None = None
        self._error: Exception | None = None

    def _embed(self) -> np.ndarray | None:
        vector = self._embedder.embed_query(self._query)
        return vector if readable(vector) else None

    async def run(self) -> None:
        try:
            self._vector = await anyio.to_thread.run_sync(self._embed, abandon_on_cancel=True)
        except Exception as exc:  # raised by get(), to the search that needs it
            self._error = exc
        finally:
            self._done.set()

    async def get(self) -> np.ndarray | None:
        await self._done.wait()
        if self._error is not None:
            raise self._error
        return self._vector


def wants_vector(params: SearchParams, embedder: Embedder | None) -> bool:
    return params.mode in ("hybrid", "dense") and embedder is not None


@asynccontextmanager
async def embedding_begun(params: SearchParams, embedder: Embedder | None) -> AsyncIterator[QueryVector | None]:
    """The query's embedding begun now (None when the search uses no vector), for `search`.
    Leaving does not wait for an embedding nobody took (a recall of an owner with no memories):
    its thread ends on its own."""
    if embedder is None or not wants_vector(params, embedder):
        yield None
        return
    vector = QueryVector(embedder, params.query)
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(vector.run)
        try:
            yield vector
        except Exception as exc:  # raised as itself below, not in the task group's ExceptionGroup
            failure = exc
        finally:
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


async def search(
    store: Store,
    embedder: Embedder | None,
    lanes: Sequence[int],
    params: SearchParams,
    pending: bool = False,
    unindexed: UnindexedVectors | None = None,
    vector: QueryVector | None = None,
) -> list[Hit]:
    """`pending`: jobs remembered before this recall are still queued, so score queued jobs
    too. `unindexed`: where the vectors of facts outside the indexes are kept between recalls.
    `vector`: the query's embedding, begun by the caller (embedding_begun); without it, a dense
    search embeds the query here.

    Two reader calls when nothing is queued: one beside the query's embedding (_words_first),
    one after it for the rest (_settle). Each hop from the event loop to the reader thread and
    back waits for a core; at 2,000 memories six of them cost more than the search itself."""
    dense = wants_vector(params, embedder)
    if dense and vector is None:
        async with embedding_begun(params, embedder) as begun:
            return await search(store, embedder, lanes, params, pending, unindexed, begun)
    # Without a query vector, lexical is all there is, whatever the mode.
    terms = content_terms(params.query) if params.mode != "dense" or not dense else []
    # A generous first pool: a fact ranked low by one signal can still win on both.
    k = min(MAX_K, max(params.limit * 4, 100))

    # The word search needs no query vector: it runs on the reader while another thread
    # embeds the query; the vector scan follows in _settle.
    async def dense_side() -> np.ndarray | None:
        return await vector.get() if dense and vector is not None else None

    first, query_vector = await side_by_side(
        lambda: store.read(
            _words_first,
            lanes,
            terms,
            k,
            dense,
            pending,
            params.repeats_fold,
            params.include_superseded,
            embedder if dense else None,
        ),
        dense_side,
    )
    if dense and query_vector is None and not terms:  # dense asked for, but the model cannot read the query
        return await search(store, None, lanes, replace(params, mode="lexical"), pending, unindexed)
    scorer = _Scorer(
        params,
        _LaneStatistics(first.indexed_ceilings, _average_lengths(first.totals, {})),
        _LaneStatistics(first.ceilings, _average_lengths(first.totals, first.added)),
        dense=query_vector is not None,
        lexical=bool(terms),
        now=time.time(),
        content_word=has_content_word(terms),
    )

    queued_cosines, waiting_cosines = await _unindexed_cosines(
        embedder, query_vector, first.queued, first.waiting, unindexed or UnindexedVectors()
    )
    extra = [
        scorer.score(
            Hit(
                job.id,
                job.text,
                0.0,
                job.namespace,
                job.created_at,
                job.created_at,
                pending=True,
                occurred_at=job.occurred_at,
                key=key,
                expires_at=job.expires_at,
            ),
            job.lane_id,
            cosine,
            strength,
        )
        for job, cosine, strength, key in zip(first.queued, queued_cosines, first.queued_strength, first.queued_keys)
    ]
    extra = [s for s in extra if scorer.in_window(s.when) and scorer.keeps(s) and scorer.current(s)]
    waiting = {row.pk: (row, cosine) for row, cosine in zip(first.waiting, waiting_cosines)}
    return await store.read(_settle, lanes, scorer, query_vector, terms, first, extra, waiting, k)


def _settle(
    reader: StoreReader,
    lanes: Sequence[int],
    scorer: _Scorer,
    query_vector: np.ndarray | None,
    terms: list[str],
    first: _WordsFirst,
    extra: list[_Scored],
    waiting: dict[int, tuple[MemoryRow, float | None]],
    k: int,
) -> list[Hit]:
    """The search once the query vector is known, in one reader call: the lanes' nearest,
    candidates with both signals, context, the time window, collapse and the copies; widened
    (k x4) until the limit-th distinct fact cannot be outscored (see the module docstring).
    Nothing here waits for anything but the reader's own connection (a backend's kNN may use
    another connection of its own), so no step needs to go back to the event loop."""
    params, searches = scorer.p, first.searches
    lexical: tuple[dict[int, float], bool] | None = first.lexical
    known: dict[int, MemoryRow] | None = first.known
    nearest: _Nearest | None = None
    exact: frozenset[int] = frozenset()  # lanes whose approximate kNN was contradicted (_doubted)
    while True:
        ranks, words_exhausted = lexical if lexical is not None else _lexical(reader, lanes, terms, k)
        if searches is not None and query_vector is not None:
            nearest = _nearest(lanes, searches, query_vector, k, exact)
        found = _candidates(reader, lanes, query_vector if searches is not None else None, ranks, nearest, known)
        if nearest is not None and searches is not None and query_vector is not None:
            doubted = _doubted(nearest, found, params.limit) - exact
            if doubted:
                exact |= doubted
                nearest = _nearest(lanes, searches, query_vector, k, doubted, before=nearest)
                found = _candidates(reader, lanes, query_vector, ranks, nearest, known)
        exhausted = words_exhausted and (nearest is None or nearest.exhausted)
        weakest = None if words_exhausted or not ranks else min(ranks.values())
        bound = scorer.bound(lanes, nearest, weakest)
        by_rowid = {c.row.pk: c for c in found}
        for rowid, (row, cosine) in waiting.items():  # scored here: the kNN cannot see them
            seen = by_rowid.get(rowid)
            by_rowid[rowid] = _Candidate(
                row, cosine, seen.strength if seen is not None else first.waiting_strength.get(rowid)
            )
        scored = scorer.score_rows(by_rowid.values())
        if scorer.in_context:
            pool = {pk: (by_rowid[pk].row, s) for pk, s in scored}
            scored = _in_context(reader, lanes, scorer, query_vector, terms, words_exhausted, pool)
        scored = [(pk, s) for pk, s in scored if scorer.keeps(s) and scorer.current(s)]
        ranked = sorted([*_in_window(reader, scorer, scored), *extra], key=_rank)
        groups = group_duplicates(ranked, scorer.now)
        full = len(groups) >= params.limit and list(groups.values())[params.limit - 1][0].score >= bound
        if full or bound < scorer.floor(not words_exhausted) or exhausted or k >= MAX_K:
            chosen = [(key, [fact.hit() for fact in group]) for key, group in list(groups.items())[: params.limit]]
            stored, queued = _stored_copies(reader, lanes, chosen, params, scorer.now)
            return [_named(survivor(key, group, {}, stored.get(key), queued), stored.get(key)) for key, group in chosen]
        lexical = known = None  # a wider pool searches again
        k = min(MAX_K, k * 4)


def _in_context(
    reader: StoreReader,
    lanes: Sequence[int],
    scorer: _Scorer,
    query_vector: np.ndarray | None,
    terms: list[str],
    words_exhausted: bool,
    candidates: dict[int, tuple[MemoryRow, _Scored]],
) -> list[tuple[int, _Scored]]:
    """Conversation turns scored with the turn before them.

    A turn often means something only after the one before it: "Thirteen, if you can believe
    it!" answers "How old is your cat now?", and neither signal connects it to "How old is
    Owen's cat?". So a memory whose predecessor in its lane (the memory created just before
    it) happened at most `context_gap_s` earlier, and that answers it (the predecessor asks a
    question) or says little itself (fewer than CONTEXT_WORDS content words), rises by
    `context_share` x need of the gap up to the predecessor's score:

        s' = s + context_share x need x max(0, s_before - s)

    need = 1 for an answer, else 1 - words / CONTEXT_WORDS. It only raises a score, never
    above the predecessor's, so scores stay in [0, 1]; both memories are of one namespace, so
    a score still depends on its own namespace only; memories without `occurred_at` (an
    agent's facts, mostly) are never linked. The turns right after the best candidates join
    the pool: an answer that shares nothing with the query is otherwise never a candidate.
    A turn still queued is scored on its own until it is curated."""
    rows = {pk: row for pk, (row, _) in candidates.items()}
    pool = {pk: scored for pk, (_, scored) in candidates.items()}
    by_lane: dict[int, list[int]] = {}
    for pk in sorted(rows, key=lambda pk: (-pool[pk].relevance, pk)):
        by_lane.setdefault(rows[pk].lane, []).append(pk)
    # Per lane, so that what one lane's memories get never depends on another lane. A memory
    # without occurred_at links to neither neighbour (_linked): its neighbours are not read
    # (an agent's facts mostly have none, and reading them cost a fifth of such a search).
    adjacent = reader.adjacent(
        [pk for best in by_lane.values() for pk in best[:CONTEXT_POOL] if rows[pk].occurred_at is not None]
    )
    before = {pk: pair[0] for pk, pair in adjacent.items() if pair[0] is not None}
    joining: dict[int, MemoryRow] = {}
    for best in by_lane.values():
        for pk in best[:CONTEXT_NEXT]:
            after = adjacent[pk][1] if pk in adjacent else None
            if after is not None and after.pk not in pool and _linked(scorer, after, rows[pk]):
                joining[after.pk] = after
                before[after.pk] = rows[pk]
    rows.update(joining)
    # Predecessors outside the pool are scored too (not returned: their own predecessors are not looked up).
    unseen = {p.pk: p for pk, p in before.items() if p.pk not in pool and pk in rows and _linked(scorer, rows[pk], p)}
    scored = {**pool, **_score_rows(reader, lanes, scorer, query_vector, terms, words_exhausted, {**unseen, **joining})}
    out: list[tuple[int, _Scored]] = []
    for pk, row in rows.items():
        own = scored[pk]
        prior = before.get(pk)
        gap = scored[prior.pk].relevance - own.relevance if prior is not None and prior.pk in scored else 0.0
        need = _linked(scorer, row, prior) if prior is not None and gap > 0 else 0.0
        if need > 0:
            own = scorer.rescored(own, own.relevance + scorer.p.context_share * need * gap)
        out.append((pk, own))
    return out


def _linked(scorer: _Scorer, row: MemoryRow, before: MemoryRow) -> float:
    """How much `row` takes from the memory stored before it: 0 unless both happened within
    context_gap_s of each other (turns of one conversation), else its need."""
    if row.occurred_at is None or before.occurred_at is None:
        return 0.0
    if abs(row.occurred_at - before.occurred_at) > scorer.p.context_gap_s:
        return 0.0
    return _need(row.body, before.body)


def _need(text: str, before: str) -> float:
    """How much a turn needs the one before it: all of it when that one asks a question (an
    answer leaves out what the question said), else the less the turn says the more."""
    if any(mark in before for mark in QUESTION_MARKS):
        return 1.0
    words: set[str] = set()
    for match in _WORD.finditer(text.casefold()):
        if match.group() not in STOPWORDS:
            words.add(match.group())
            if len(words) >= CONTEXT_WORDS:
                return 0.0
    return 1.0 - len(words) / CONTEXT_WORDS


def _score_rows(
    reader: StoreReader,
    lanes: Sequence[int],
    scorer: _Scorer,
    query_vector: np.ndarray | None,
    terms: list[str],
    words_exhausted: bool,
    rows: dict[int, MemoryRow],
) -> dict[int, _Scored]:
    """Both signals of memories neither search reached, scored as any candidate. When the word
    search returned every match, a memory it did not return matches no query word."""
    cosines: dict[int, float] = {}
    by_lane: dict[int, list[int]] = {}
    for pk, row in rows.items():
        by_lane.setdefault(row.lane, []).append(pk)
    if query_vector is not None:
        for lane, pks in by_lane.items():
            cosines.update(reader.cosines(lane, query_vector, pks))
    strengths: dict[int, float] = {}
    if terms and rows and not words_exhausted:
        # One wide word search, not text_strengths: FTS5 scores every match for either, but a
        # MATCH restricted to some rowids took 20-30 ms here against a few for the whole lane.
        strengths = {pk: strength for pk, strength in reader.text_search(lanes, terms, MAX_K)[0] if pk in rows}
    return dict(scorer.score_rows(_Candidate(row, cosines.get(pk), strengths.get(pk)) for pk, row in rows.items()))


def _named(hit: Hit, copies: KeyCopies | None) -> Hit:
    """The hit with the ids of the other stored memories of its text (what it folded)."""
    ids = tuple(i for i in copies.ids if i != hit.id) if copies is not None else ()
    return replace(hit, collapsed_ids=ids) if ids else hit


def _stored_copies(
    reader: StoreReader,
    lanes: Sequence[int],
    chosen: Sequence[tuple[str, list[Hit]]],
    params: SearchParams,
    now: float,
) -> tuple[dict[str, KeyCopies], set[str]]:
    """The store's copies of the chosen texts that this recall could show (an expired or
    superseded copy only when those are asked for) and, in the same snapshot, which of the
    queued hits are still queued: a job curated since the queue was read is counted by the
    store already (as the memory, or a repeat on it) and must not be counted again as a copy."""
    pending = [hit.id for _, group in chosen for hit in group if hit.pending]
    stored = reader.copies_by_key(
        lanes,
        [key for key, _ in chosen],
        params.since,
        params.until,
        live_at=None if params.include_expired else now,
        superseded=params.include_superseded,
    )
    return stored, reader.still_queued(pending)


def _in_window(reader: StoreReader, scorer: _Scorer, scored: list[tuple[int, _Scored]]) -> list[_Scored]:
    """The memories (pk, scored) inside since/until: by their own date, or by a repeat recorded
    on them with a date inside it (then shown, and weighed by prefer_recent, with the latest such
    date). Another memory with the same text is no evidence: in the window, it is a hit itself,
    with its own id, namespace and date; outside, it is not."""
    if not scorer.windowed:
        return [s for _, s in scored]
    inside = [s for _, s in scored if scorer.in_window(s.when)]
    outside = [(pk, s) for pk, s in scored if not scorer.in_window(s.when)]
    if not outside:
        return inside
    latest = reader.repeats_in_window([pk for pk, _ in outside], scorer.p.since, scorer.p.until)
    for pk, s in outside:
        if pk in latest:
            inside.append(scorer.rescored(s, s.relevance, latest[pk]))
    return inside


async def _unindexed_cosines(
    embedder: Embedder | None,
    query_vector: np.ndarray | None,
    queued: Sequence[QueuedJob],
    waiting: Sequence[MemoryRow],
    cache: UnindexedVectors,
) -> tuple[list[float | None], list[float | None]]:
    """Cosines of facts the vector index cannot see: queued jobs (read-your-writes) and
    memories still waiting for a vector (stored while the model was unavailable).

    Texts whose vectors are cached cost nothing; of the others, at most EMBED_TEXTS
    (EMBED_CHARS of text) are embedded per recall, queued jobs first in the fair order they
    came in; the rest get no cosine this time (their words still count)."""
    texts = [job.text for job in queued] + [row.body for row in waiting]
    cosines: list[float | None] = [None] * len(texts)
    if embedder is None or query_vector is None or not texts:
        return cosines[: len(queued)], cosines[len(queued) :]
    try:
        vectors = cache.cached(embedder, texts)
        budget, chars = EMBED_TEXTS, EMBED_CHARS
        new: list[int] = []
        for i, (text, vector) in enumerate(zip(texts, vectors)):
            if vector is None and budget > 0 and (chars >= len(text) or not new):
                new.append(i)
                budget -= 1
                chars -= len(text)
        if new:
            fresh = await anyio.to_thread.run_sync(cache.embed, embedder, [texts[i] for i in new])
            for i, vector in zip(new, fresh):
                vectors[i] = vector
        left = sum(1 for vector in vectors if vector is None)
        if left:
            log.info("recall: %d facts outside the indexes are matched by their words only this time", left)
        cosines = [float(vector @ query_vector) if vector is not None else None for vector in vectors]
    except Exception:  # a recall must not fail because curation's input is odd: match words
        log.exception("embedding %d unindexed facts for recall failed; matching their words", len(texts))
    return cosines[: len(queued)], cosines[len(queued) :]
