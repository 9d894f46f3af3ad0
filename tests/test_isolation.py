"""Owners are walls (DESIGN.md, principle 4), as a property of random interleavings.

Two owners, alice and bob, take turns at remember / remember_status / recall (one
namespace or "*") / list / history / forget, in random order. Every reply one owner
gets is checked against a model built only from that owner's own actions:

- no text of the other (each owner's facts carry a marker word; two facts are shared
  verbatim, so folding across owners would show up in the counts),
- no job id, memory id or private namespace name of the other,
- copies / collapsed / occurrences / erased_jobs equal what the owner's own remembers
  and forgets imply,
- the other's job and memory ids are refused with the same message, word for word, as
  ids nobody has (only the id itself differs),
- the other's use of an idempotency key changes nothing for this owner.

The same driver runs here against the real MemoryService in-process (hypothesis
shrinks a failing interleaving), and in tests/e2e/test_isolation_http.py over
streamable HTTP with two bearer tokens. Two deliberate side channels that the
property does not cover (scores and list cursors) have their own tests below.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwal_mcp import validation
from memwal_mcp.config import Settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import MemwalError
from memwal_mcp.normalize import normalize_text
from memwal_mcp.recall.format import recall_text
from memwal_mcp.schemas import (
    ForgetOut,
    HistoryOut,
    JobOut,
    ListOut,
    RecallOut,
    RememberOut,
    StatusOut,
    history_text,
    job_line,
    list_text,
)
from memwal_mcp.service import MemoryService
from tests.databases import Database, SqliteDatabase

OWNERS = ("alice", "bob")
# A word only that owner's facts contain: seeing it in the other's reply is a leak.
MARKERS = {"alice": "Xylowen", "bob": "Qorvath"}
PRIVATE_NS = {"alice": "alice-only", "bob": "bob-only"}
NAMESPACES = ("default", "work", "private")
FACTS = (
    "{m} prefers dark roast coffee",
    "Deploys for {m} go out on Fridays from us-east-1",
    "{m}'s cat is named Miso 🐈",
    "{m} uses tabs, not spaces, in Go code",
    "The café {m} likes is on Rue de Rivoli",
    # Shared verbatim by both owners: only the counts can tell if they were folded together.
    "The office wifi network is called Tealeaf",
    "Standup starts at 9:30 every morning",
)
QUERIES = ("coffee", "deploys on Fridays", "cat", "tabs or spaces", "café", "wifi network", "standup", "zebra")
# Shared key names: the same key used by both owners must be two separate requests.
KEYS = ("key-a", "key-b", "key-c")
STATUS_WAIT_MS = 20_000
CALL_TIMEOUT_S = 60.0


def other_of(owner: str) -> str:
    return OWNERS[1 - OWNERS.index(owner)]


def fact_text(owner: str, fact: int, variant: int) -> str:
    """Variants 1 and 2 normalize to the same text as variant 0 (case, whitespace)."""
    text = FACTS[fact].format(m=MARKERS[owner])
    if variant == 1:
        return text.upper()
    if variant == 2:
        return "  " + "  ".join(text.split(" ")) + "\n"
    return text


# --- operations -------------------------------------------------------------------------


@dataclass(frozen=True)
class Remember:
    owner: str
    fact: int
    variant: int
    ns: str  # one of NAMESPACES ("private" = the owner's own private namespace)
    key: int | None
    wait: bool


@dataclass(frozen=True)
class Recall:
    owner: str
    query: int
    scope: str  # NAMESPACES, "*", "theirs" (the other's private namespace), "ghost"
    limit: int
    settle: bool


@dataclass(frozen=True)
class Status:
    owner: str
    target: str  # own / other / unknown / mixed
    pick: int


@dataclass(frozen=True)
class History:
    owner: str
    target: str  # own / other / unknown
    pick: int


@dataclass(frozen=True)
class ListMemories:
    owner: str
    scope: str
    page: int


@dataclass(frozen=True)
class Forget:
    owner: str
    target: str  # own / other / unknown
    pick: int


Op = Remember | Recall | Status | History | ListMemories | Forget

_owner = st.sampled_from(OWNERS)
_pick = st.integers(0, 1_000)
_remember = st.builds(
    Remember,
    _owner,
    st.integers(0, len(FACTS) - 1),
    st.integers(0, 2),
    st.sampled_from(NAMESPACES),
    st.one_of(st.none(), st.none(), st.integers(0, len(KEYS) - 1)),
    st.booleans(),
)
_recall = st.builds(
    Recall,
    _owner,
    st.integers(0, len(QUERIES) - 1),
    st.sampled_from((*NAMESPACES, "*", "*", "theirs", "ghost")),
    st.sampled_from((100, 100, 1, 3)),
    st.booleans(),
)
_status = st.builds(Status, _owner, st.sampled_from(("own", "other", "unknown", "mixed")), _pick)
_history = st.builds(History, _owner, st.sampled_from(("own", "other", "unknown")), _pick)
_list = st.builds(ListMemories, _owner, st.sampled_from((*NAMESPACES, "*", "theirs")), st.sampled_from((1, 2, 7, 100)))
_forget = st.builds(Forget, _owner, st.sampled_from(("own", "own", "other", "unknown")), _pick)
op_strategy = st.one_of(_remember, _remember, _remember, _recall, _status, _history, _list, _forget)


def random_ops(rng: random.Random, count: int) -> list[Op]:
    """The same kinds of operation as op_strategy, from a seeded generator (for the HTTP test)."""
    ops: list[Op] = []
    for _ in range(count):
        owner = rng.choice(OWNERS)
        kind = rng.choice(("remember",) * 3 + ("recall", "status", "history", "list", "forget"))
        if kind == "remember":
            key = rng.randrange(len(KEYS)) if rng.random() < 0.3 else None
            ops.append(
                Remember(
                    owner, rng.randrange(len(FACTS)), rng.randrange(3), rng.choice(NAMESPACES), key, rng.random() < 0.5
                )
            )
        elif kind == "recall":
            ops.append(
                Recall(
                    owner,
                    rng.randrange(len(QUERIES)),
                    rng.choice((*NAMESPACES, "*", "*", "theirs", "ghost")),
                    rng.choice((100, 100, 1, 3)),
                    rng.random() < 0.7,
                )
            )
        elif kind == "status":
            ops.append(Status(owner, rng.choice(("own", "other", "unknown", "mixed")), rng.randrange(1000)))
        elif kind == "history":
            ops.append(History(owner, rng.choice(("own", "other", "unknown")), rng.randrange(1000)))
        elif kind == "list":
            ops.append(ListMemories(owner, rng.choice((*NAMESPACES, "*", "theirs")), rng.choice((1, 2, 7, 100))))
        else:
            ops.append(Forget(owner, rng.choice(("own", "own", "other", "unknown")), rng.randrange(1000)))
    return ops


# --- what each owner can know ----------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A tool reply as a client sees it: error flag, structured content, text."""

    is_error: bool
    data: dict[str, Any] | None
    text: str


Call = Callable[[str, str, dict[str, Any]], Awaitable[Reply]]


@dataclass
class JobModel:
    id: str
    ns: str
    text: str
    key: str | None
    decision: str | None = None
    memory_id: str | None = None


@dataclass
class MemoryModel:
    id: str
    ns: str
    norm: str
    body: str
    live: bool = True
    jobs: list[str] = field(default_factory=list)


@dataclass
class OwnerModel:
    owner: str
    jobs: dict[str, JobModel] = field(default_factory=dict)
    unsettled: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    memories: dict[str, MemoryModel] = field(default_factory=dict)
    current: dict[tuple[str, str], str] = field(default_factory=dict)  # (ns, norm) -> live memory id

    @property
    def private_ns(self) -> str:
        return PRIVATE_NS[self.owner]

    def namespace(self, ns: str) -> str:
        return self.private_ns if ns == "private" else ns


def _strip_id(text: str, ident: str) -> str:
    return text.replace(ident, "<ID>")


class IsolationDriver:
    """Runs operations for two owners through `call` and checks every reply against the owner's model."""

    def __init__(self, call: Call, db: Database | None = None) -> None:
        self.call = call
        self.db = db
        self.models = {owner: OwnerModel(owner) for owner in OWNERS}
        self._unknown = 0
        self.calls = 0

    # --- plumbing --------------------------------------------------------------------------

    def unknown_id(self, prefix: str) -> str:
        self._unknown += 1
        return f"{prefix}_{(self._unknown * 0x9E3779B97F4A7C15) % 2**64:016x}"

    async def ask(self, owner: str, tool: str, arguments: dict[str, Any], echoed: Sequence[str] = ()) -> Reply:
        with anyio.fail_after(CALL_TIMEOUT_S):
            reply = await self.call(owner, tool, arguments)
        self.calls += 1
        self.scan(owner, reply, echoed, f"{tool} {arguments}")
        return reply

    def scan(self, owner: str, reply: Reply, echoed: Sequence[str], what: str) -> None:
        """Nothing of the other owner in this reply, except what the caller itself sent."""
        other = self.models[other_of(owner)]
        blob = reply.text + "\n" + (json.dumps(reply.data, ensure_ascii=False) if reply.data is not None else "")
        for item in echoed:
            blob = blob.replace(item, "<echo>")
        context = f"{owner}'s {what} -> {blob[:2000]}"
        assert "Traceback" not in blob, context
        assert MARKERS[other.owner].casefold() not in blob.casefold(), f"{other.owner}'s text leaked: {context}"
        assert other.private_ns not in blob, f"{other.owner}'s namespace leaked: {context}"
        for job_id in other.jobs:
            assert job_id not in blob, f"{other.owner}'s job id {job_id} leaked: {context}"
        for memory_id in other.memories:
            assert memory_id not in blob, f"{other.owner}'s memory id {memory_id} leaked: {context}"

    async def settle(self, owner: str) -> None:
        """Wait for the owner's queued jobs (its own status calls) and fold the outcomes into its model."""
        model = self.models[owner]
        pending, model.unsettled = model.unsettled, []
        for start in range(0, len(pending), 50):
            chunk = pending[start : start + 50]
            reply = await self.ask(owner, "memwal_remember_status", {"job_ids": chunk, "wait_ms": STATUS_WAIT_MS})
            assert not reply.is_error, reply.text
            jobs = reply.data["jobs"]
            assert [job["job_id"] for job in jobs] == chunk
            for job in jobs:
                assert job["status"] == "done", job
                self._done(model, job)

    def _done(self, model: OwnerModel, job: dict[str, Any]) -> None:
        """Fold one finished job, in arrival order: the first of a text in a lane creates, repeats fold."""
        mine = model.jobs[job["job_id"]]
        assert job["namespace"] == mine.ns
        lane_key = (mine.ns, normalize_text(mine.text))
        current = model.current.get(lane_key)
        if current is not None:
            assert (job["decision"], job["memory_id"]) == ("occurrence", current), (job, model.memories[current])
        else:
            assert job["decision"] == "created", job
            assert job["memory_id"] not in model.memories, job
            model.memories[job["memory_id"]] = MemoryModel(job["memory_id"], mine.ns, lane_key[1], mine.text)
            model.current[lane_key] = job["memory_id"]
        mine.decision, mine.memory_id = job["decision"], job["memory_id"]
        model.memories[job["memory_id"]].jobs.append(mine.id)

    def _pick(self, ids: Sequence[str], pick: int) -> str | None:
        return ids[pick % len(ids)] if ids else None

    async def _same_refusal(
        self, owner: str, tool: str, arguments: Callable[[str], dict[str, Any]], theirs: str, prefix: str
    ) -> None:
        """The other's id and an id nobody has get the same error, word for word."""
        unknown = self.unknown_id(prefix)
        refused = await self.ask(owner, tool, arguments(theirs), echoed=[theirs])
        baseline = await self.ask(owner, tool, arguments(unknown), echoed=[unknown])
        assert refused.is_error and baseline.is_error, (refused, baseline)
        assert refused.data is None or not refused.data, refused
        assert _strip_id(refused.text, theirs) == _strip_id(baseline.text, unknown), (refused.text, baseline.text)

    # --- operations ---------------------------------------------------------------------------

    async def run(self, ops: Sequence[Op]) -> None:
        for op in ops:
            await self.apply(op)
        await self.final_checks()

    async def run_concurrently(self, ops: Sequence[Op]) -> None:
        """Each owner's operations in order, the two owners at the same time (calls in flight together)."""

        async def one(owner: str) -> None:
            for op in ops:
                if op.owner == owner:
                    await self.apply(op)

        async with anyio.create_task_group() as group:
            for owner in OWNERS:
                group.start_soon(one, owner)
        await self.final_checks()

    async def apply(self, op: Op) -> None:
        handler = {
            Remember: self.remember,
            Recall: self.recall,
            Status: self.status,
            History: self.history,
            ListMemories: self.list,
            Forget: self.forget,
        }[type(op)]
        await handler(op)

    async def remember(self, op: Remember) -> None:
        model = self.models[op.owner]
        text = fact_text(op.owner, op.fact, op.variant)
        ns = model.namespace(op.ns)
        key = KEYS[op.key] if op.key is not None else None
        arguments: dict[str, Any] = {"text": text, "namespace": ns}
        if key is not None:
            arguments["idempotency_key"] = key
        if op.wait:
            arguments["wait_ms"] = STATUS_WAIT_MS
        reply = await self.ask(op.owner, "memwal_remember", arguments)
        earlier = model.jobs.get(model.keys.get(key, "")) if key is not None else None
        if earlier is not None and earlier.decision != "forgotten":  # a forget releases the key
            if earlier.text == text and earlier.ns == ns:
                assert not reply.is_error, reply.text
                assert reply.data["replayed"] is True and reply.data["job_id"] == earlier.id, reply.data
            else:
                assert reply.is_error, reply
                assert repr(key) in reply.text and "already used" in reply.text, reply.text
            return
        assert not reply.is_error, reply.text
        job = reply.data
        assert job["replayed"] is False, f"{op.owner}'s first use of {key!r} replayed a job: {job}"
        assert job["job_id"] not in model.jobs
        assert job["namespace"] == ns
        assert job["status"] == ("done" if op.wait else job["status"]) and job["status"] in ("queued", "done"), job
        model.jobs[job["job_id"]] = JobModel(job["job_id"], ns, text, key)
        model.unsettled.append(job["job_id"])
        if key is not None:
            model.keys[key] = job["job_id"]

    def _scope(self, owner: str, scope: str) -> str:
        if scope == "theirs":
            return PRIVATE_NS[other_of(owner)]
        if scope == "ghost":
            return "nobody-uses-this"
        return self.models[owner].namespace(scope)

    def _live(self, owner: str, scope: str) -> list[MemoryModel]:
        return [m for m in self.models[owner].memories.values() if m.live and scope in ("*", m.ns)]

    async def recall(self, op: Recall) -> None:
        model = self.models[op.owner]
        scope = self._scope(op.owner, op.scope)
        query = QUERIES[op.query]
        strict = op.settle or op.scope in ("theirs", "ghost")
        if strict:
            await self.settle(op.owner)
        # min_score 0: every fact is a candidate (not only relevant ones), so the reply can be
        # checked for completeness against the model.
        arguments = {"query": query, "namespace": scope, "limit": op.limit, "min_score": 0}
        reply = await self.ask(op.owner, "memwal_recall", arguments, echoed=[scope])
        assert not reply.is_error, reply.text
        result = reply.data
        hits = result["hits"]
        assert len({normalize_text(hit["text"]) for hit in hits}) == len(hits), hits
        if not strict:
            own_texts = {normalize_text(job.text) for job in model.jobs.values()}
            for hit in hits:
                assert normalize_text(hit["text"]) in own_texts, hit
                assert hit["id"] in model.jobs if hit["pending"] else True
            return
        groups: dict[str, list[MemoryModel]] = {}
        for memory in self._live(op.owner, scope):
            groups.setdefault(memory.norm, []).append(memory)
        assert len(hits) == min(op.limit, len(groups)), (hits, groups)
        for hit in hits:
            group = groups[normalize_text(hit["text"])]
            survivor = next((m for m in group if m.id == hit["id"]), None)
            assert survivor is not None, (hit, group)
            assert hit["text"] == survivor.body and hit["namespace"] == survivor.ns and not hit["pending"]
            assert hit["copies"] == sum(len(m.jobs) for m in group) - 1, (hit, group)
        assert result["collapsed"] == sum(hit["copies"] for hit in hits)
        if op.scope == "theirs":
            # The other owner's namespace looks exactly like one nobody uses.
            ghost = await self.ask(op.owner, "memwal_recall", {**arguments, "namespace": "nobody-uses-this"})
            assert ghost.data["hits"] == [] and reply.data["hits"] == []
            assert reply.text.replace(scope, "<NS>") == ghost.text.replace("nobody-uses-this", "<NS>")

    async def status(self, op: Status) -> None:
        model = self.models[op.owner]
        other = self.models[other_of(op.owner)]
        own = list(model.jobs)
        if op.target == "own":
            if not own:
                return
            asked = list(dict.fromkeys(own[(op.pick + i) % len(own)] for i in range(min(3, len(own)))))
            reply = await self.ask(op.owner, "memwal_remember_status", {"job_ids": asked})
            assert not reply.is_error, reply.text
            assert [job["job_id"] for job in reply.data["jobs"]] == asked
            for job in reply.data["jobs"]:
                mine = model.jobs[job["job_id"]]
                assert job["namespace"] == mine.ns
                if mine.decision is not None:
                    assert (job["status"], job["decision"], job["memory_id"]) == ("done", mine.decision, mine.memory_id)
            return
        theirs = self._pick(list(other.jobs), op.pick) or self.unknown_id("j")
        if op.target == "mixed" and own:
            mine = self._pick(own, op.pick)
            await self._same_refusal(op.owner, "memwal_remember_status", lambda x: {"job_ids": [mine, x]}, theirs, "j")
        elif op.target in ("other", "mixed"):
            await self._same_refusal(op.owner, "memwal_remember_status", lambda x: {"job_ids": [x]}, theirs, "j")
        else:
            reply = await self.ask(op.owner, "memwal_remember_status", {"job_ids": [self.unknown_id("j")]})
            assert reply.is_error and "no job with id" in reply.text, reply.text

    async def history(self, op: History) -> None:
        model = self.models[op.owner]
        other = self.models[other_of(op.owner)]
        if op.target == "own":
            await self.settle(op.owner)
            memory_id = self._pick(list(model.memories), op.pick)
            if memory_id is not None:
                await self._check_history(op.owner, memory_id)
            return
        theirs = self._pick(list(other.memories), op.pick) if op.target == "other" else None
        await self._same_refusal(
            op.owner, "memwal_history", lambda x: {"memory_id": x}, theirs or self.unknown_id("m"), "m"
        )

    async def _check_history(self, owner: str, memory_id: str) -> None:
        memory = self.models[owner].memories[memory_id]
        reply = await self.ask(owner, "memwal_history", {"memory_id": memory_id})
        assert not reply.is_error, reply.text
        history = reply.data
        assert history["memory_id"] == memory_id and history["namespace"] == memory.ns
        assert history["status"] == ("live" if memory.live else "forgotten"), history
        assert history["body"] == (memory.body if memory.live else ""), history
        assert sorted(job["job_id"] for job in history["jobs"]) == sorted(memory.jobs), (history, memory)
        assert history["revisions"] == [] and history["merged_from"] == []

    async def list(self, op: ListMemories) -> None:
        await self.settle(op.owner)
        await self._check_list(op.owner, self._scope(op.owner, op.scope), op.page)

    async def _check_list(self, owner: str, scope: str, page: int) -> None:
        seen: list[dict[str, Any]] = []
        cursor = None
        for _ in range(200):
            arguments: dict[str, Any] = {"namespace": scope, "limit": page}
            if cursor is not None:
                arguments["cursor"] = cursor
            reply = await self.ask(owner, "memwal_list", arguments, echoed=[scope])
            assert not reply.is_error, reply.text
            seen += reply.data["memories"]
            cursor = reply.data["next_cursor"]
            if cursor is None:
                break
        assert cursor is None, "list never reached its last page"
        expected = {m.id: m for m in self._live(owner, scope)}
        assert sorted(item["id"] for item in seen) == sorted(expected), (seen, expected)
        for item in seen:
            memory = expected[item["id"]]
            assert item["text"] == memory.body and item["namespace"] == memory.ns, (item, memory)
            assert item["occurrences"] == len(memory.jobs) - 1, (item, memory)
        stamps = [item["created_at"] for item in seen]
        assert stamps == sorted(stamps, reverse=True), stamps

    async def forget(self, op: Forget) -> None:
        model = self.models[op.owner]
        other = self.models[other_of(op.owner)]
        if op.target == "own":
            await self.settle(op.owner)
            memory_id = self._pick(list(model.memories), op.pick)
            if memory_id is None:
                return
            memory = model.memories[memory_id]
            reply = await self.ask(op.owner, "memwal_forget", {"memory_id": memory_id})
            assert not reply.is_error, reply.text
            if not memory.live:  # forgotten before: nothing more is erased, and the reply says so
                assert reply.data["already_forgotten"] and reply.data["erased_memories"] == [], reply.data
                assert reply.data["erased_jobs"] == 0, reply.data
                return
            assert reply.data["erased_memories"] == [memory_id], reply.data
            assert reply.data["erased_jobs"] == len(memory.jobs), (reply.data, memory)
            if memory.live:
                memory.live = False
                del model.current[(memory.ns, memory.norm)]
                for job_id in memory.jobs:
                    model.jobs[job_id].decision = "forgotten"
            return
        theirs = self._pick(list(other.memories), op.pick) if op.target == "other" else None
        # Refused like an unknown id; the other's memory stays (their final checks prove it).
        await self._same_refusal(
            op.owner, "memwal_forget", lambda x: {"memory_id": x}, theirs or self.unknown_id("m"), "m"
        )

    async def final_checks(self) -> None:
        for owner in OWNERS:
            await self.settle(owner)
            await self.recall(Recall(owner, 0, "*", 100, True))
            await self._check_list(owner, "*", 100)
            for memory_id in list(self.models[owner].memories)[:6]:
                await self._check_history(owner, memory_id)
        if self.db is not None:
            check_rows_stay_with_their_owner(self.db, {o: set(m.jobs) for o, m in self.models.items()})


def check_rows_stay_with_their_owner(db: Database, jobs_by_owner: dict[str, set[str]]) -> None:
    """Straight from the database: every row sits in a lane of its own owner, and nothing links two owners."""
    crossed = db.rows(
        "SELECT 'job', j.id FROM remember_jobs j JOIN lanes l ON l.id = j.lane_id"
        "  WHERE l.owner != j.owner OR l.namespace != j.namespace"
        " UNION ALL SELECT 'memory', m.id FROM memories m JOIN lanes l ON l.id = m.lane_id"
        "  WHERE l.owner != m.owner OR l.namespace != m.namespace"
        " UNION ALL SELECT 'job->memory', j.id FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        "  WHERE m.owner != j.owner OR m.lane_id != j.lane_id"
    )
    assert crossed == [], crossed
    for owner, expected in jobs_by_owner.items():
        stored = {row[0] for row in db.rows("SELECT id FROM remember_jobs WHERE owner = ?", (owner,))}
        assert stored == expected, f"{owner}: the journal differs from the jobs {owner} was given"


# --- the in-process backend --------------------------------------------------------------------


def service_call(service: MemoryService) -> Call:
    """MemoryService called directly; replies rendered with the server's own output models and texts."""

    async def call(owner: str, tool: str, arguments: dict[str, Any]) -> Reply:
        try:
            if tool == "memwal_remember":
                outcome = await service.remember(
                    owner,
                    arguments["text"],
                    arguments.get("namespace"),
                    arguments.get("idempotency_key"),
                    arguments.get("wait_ms", 0),
                )
                out = RememberOut(**JobOut.of(outcome.job).model_dump(), replayed=outcome.replayed)
                return Reply(False, out.model_dump(), job_line(out))
            if tool == "memwal_remember_status":
                jobs = await service.status(owner, arguments["job_ids"], arguments.get("wait_ms", 0))
                out = StatusOut(jobs=[JobOut.of(job) for job in jobs])
                return Reply(False, out.model_dump(), "\n".join(job_line(job) for job in out.jobs))
            if tool == "memwal_recall":
                result = await service.recall(
                    owner,
                    arguments["query"],
                    arguments.get("limit"),
                    arguments.get("namespace"),
                    arguments.get("min_score"),
                )
                return Reply(False, RecallOut.of(result).model_dump(), recall_text(result))
            if tool == "memwal_history":
                out = HistoryOut.of(await service.history(owner, arguments["memory_id"]))
                return Reply(False, out.model_dump(), history_text(out))
            if tool == "memwal_forget":
                out = ForgetOut.of(await service.forget(owner, arguments["memory_id"]))
                return Reply(False, out.model_dump(), f"Forgot {out.memory_id}")
            if tool == "memwal_list":
                out = ListOut.of(
                    await service.list(
                        owner, arguments.get("namespace"), arguments.get("cursor"), arguments.get("limit")
                    )
                )
                return Reply(False, out.model_dump(), list_text(out))
        except MemwalError as exc:
            return Reply(True, None, str(exc))
        raise AssertionError(f"unknown tool {tool}")

    return call


def _settings(db_path: Path, **overrides: Any) -> Settings:
    from memwal_mcp.config import load_settings

    return load_settings(db_path=db_path, **overrides)


async def _run_in_process(ops: Sequence[Op], embedder: FastEmbedEmbedder, concurrent: bool = False) -> IsolationDriver:
    with tempfile.TemporaryDirectory(prefix="memwal-isolation-") as folder:
        db_path = Path(folder) / "memwal.db"
        service = MemoryService(_settings(db_path), embedder=embedder)
        async with service.running():
            driver = IsolationDriver(service_call(service), SqliteDatabase(db_path))
            with anyio.fail_after(120):
                await (driver.run_concurrently(ops) if concurrent else driver.run(ops))
        return driver


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(ops=st.lists(op_strategy, min_size=4, max_size=40))
def test_random_interleavings_never_cross_owners(ops: list[Op], embedder: FastEmbedEmbedder) -> None:
    anyio.run(_run_in_process, ops, embedder)


def test_a_long_seeded_interleaving_never_crosses_owners(embedder: FastEmbedEmbedder) -> None:
    """One longer sequence, so forgets, key reuse and folding pile up more than in the short examples."""
    driver = anyio.run(_run_in_process, random_ops(random.Random(6), 150), embedder)
    assert driver.calls > 150


def test_both_owners_at_once_never_cross(embedder: FastEmbedEmbedder) -> None:
    """The owners' calls overlap in time: one owner's curation runs while the other's reads happen."""
    driver = anyio.run(_run_in_process, random_ops(random.Random(11), 150), embedder, True)
    assert driver.calls > 150


def test_the_same_idempotency_key_for_two_owners_is_two_jobs(embedder: FastEmbedEmbedder) -> None:
    """A focused case of the property: the key is per owner, never a cross-owner lookup."""
    ops: list[Op] = [
        Remember("alice", 5, 0, "default", 0, True),
        Remember("bob", 5, 0, "default", 0, True),  # same key, same (shared) text, same namespace
        Remember("bob", 0, 0, "default", 1, False),
        Remember("alice", 1, 0, "work", 1, False),  # bob used key-b for another text: not alice's business
        Recall("alice", 5, "default", 100, True),
        Recall("bob", 5, "*", 100, True),
    ]
    driver = anyio.run(_run_in_process, ops, embedder)
    alice, bob = driver.models["alice"], driver.models["bob"]
    assert alice.keys[KEYS[0]] != bob.keys[KEYS[0]] and alice.keys[KEYS[1]] != bob.keys[KEYS[1]]


# --- side channels the property does not look at ---------------------------------------------------


async def _alice_view(
    embedder: FastEmbedEmbedder, bob_facts: int
) -> tuple[list[tuple[str, float]], tuple[float, str] | None]:
    """Alice's recall scores and list cursor after the same actions of hers, with bob storing `bob_facts` facts."""
    with tempfile.TemporaryDirectory(prefix="memwal-side-") as folder:
        service = MemoryService(_settings(Path(folder) / "memwal.db"), embedder=embedder)
        async with service.running():
            for text in ("Alice feeds the zebra at noon", "Alice rides a red bicycle", "Alice drinks green tea"):
                await service.remember("alice", text, wait_ms=STATUS_WAIT_MS)
            for i in range(bob_facts):
                await service.remember("bob", f"Bob saw zebra number {i} at the zebra crossing", wait_ms=STATUS_WAIT_MS)
            await service.remember("alice", "Alice waters the ferns on Sundays", wait_ms=STATUS_WAIT_MS)
            result = await service.recall("alice", "zebra", limit=10)
            page = await service.list("alice", "*", None, 1)
        return (
            [(hit.text, round(hit.score, 6)) for hit in result.hits],
            validation.cursor(page.next_cursor) if page.next_cursor else None,
        )


def test_recall_scores_do_not_depend_on_the_other_owner(embedder: FastEmbedEmbedder) -> None:
    alone, _ = anyio.run(_alice_view, embedder, 0)
    beside_bob, _ = anyio.run(_alice_view, embedder, 6)
    assert [text for text, _ in alone] == [text for text, _ in beside_bob]
    assert alone == beside_bob


def test_list_cursors_do_not_count_the_other_owners_memories(embedder: FastEmbedEmbedder) -> None:
    """A cursor holds only the position of alice's own last listed memory: its time and its (random) id."""
    for bob_facts in (0, 6):
        _, cursor = anyio.run(_alice_view, embedder, bob_facts)
        assert cursor is not None
        created_at, memory_id = cursor
        assert isinstance(memory_id, str) and memory_id.startswith("m_"), cursor
        assert created_at > 1_600_000_000  # a time, not a counter
