"""Fuzz every tool's arguments against the real MemoryService, in-process.

Hypothesis draws calls of memwal_remember / _remember_status / _recall / _list /
_history / _forget with hostile arguments: any Unicode (lone surrogates, NUL, U+202E,
U+200B, huge whitespace runs, FTS5 syntax), strings over 64 KiB, empty strings, and
wrong types (ints for strings, lists, None, nested objects, huge integers). Every call
must end cleanly: a result the server can render (its own output models and reply
texts), or a MemwalError whose message is a short readable sentence. The service keeps
serving, every accepted text is stored byte for byte, and `memwal-mcp check` passes.

Inputs that hit a bug already known are skipped by `known_bug()`, and each such bug has
its own strict xfail test: when one is fixed its xfail turns into a failure (XPASS), and
its line in known_bug() should go. The tests at the bottom pin bugs fixed that way.
"""

from __future__ import annotations

import base64
import math
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwal_mcp.config import Settings, load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import InvalidInput, MemwalError, NotFound
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

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
OWNER = "fuzz"
TOOLS = ("memwal_remember", "memwal_remember_status", "memwal_recall", "memwal_list", "memwal_history", "memwal_forget")
MAX_MESSAGE = 1000  # characters: an error message is a sentence, not an echo of a 64 KiB input

# Names that must never reach a caller: they mean an exception escaped unhandled.
INTERNALS = re.compile(
    r"Traceback|File \"|sqlite3|OperationalError|IntegrityError|ProgrammingError|DatabaseError|"
    r"Unicode(En|De)codeError|OverflowError|ValueError|TypeError|KeyError|AttributeError|IndexError|"
    r"AssertionError|RuntimeError|RecursionError|NoneType|object has no attribute|not subscriptable"
)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()  # the argument is left out


@dataclass(frozen=True)
class Known:
    """Stands for a real id (or cursor) of this run, picked when the call is made."""

    kind: str  # job / memory / cursor
    pick: int


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# --- values -------------------------------------------------------------------------------

HOSTILE_STRINGS = [
    "",
    " ",
    "\t \n ",
    "\x00",
    "fact with a NUL \x00 inside",
    "\u202eevil override: the deploy is on Friday",
    "zero\u200bwidth\u200bfact",
    "\u200b",
    "\ufeffBOM-led fact",
    "\u202e",
    "\u2028line\u2029paragraph",
    " " * 70_000,
    "\n" * 10_000 + "a fact after ten thousand newlines",
    "\u3000" * 5_000,
    "\t" * 3_000,
    " " * 60_000 + "a fact after 60000 spaces",
    "x" * 65_536,
    "x" * 65_537,
    "é" * 32_768,
    "é" * 32_769,
    "🙂" * 16_385,
    'NEAR("deploy" "friday", 3)',
    '"unbalanced quote',
    "deploy AND friday OR NOT coffee",
    "body:secret",
    "*",
    "^start",
    "col:(a OR b)",
    "-",
    "{a b}",
    "deploy*",
    '""',
    "'; DROP TABLE memories; --",
    "\U0010ffff",
    "\ufffe",
    "ﬁ ligature Ǆ İstanbul ß",
    "Ω Å K ℃",
    "a\r\nb",
    "\x1b[31mred\x1b[0m",
    "\x7f",
    "\x85",
    "m_0123456789abcdef",
    "j_0123456789abcdef",
    "default",
    "../../etc/passwd",
    "%s%n%x",
    "{0}{1}",
    "\\",
    "null",
    "0",
    "a" * 64,
    "a" * 65,
    "2026-11-30",
    "2023-06-10T18:00:00Z",
    "0001-01-01",
    "2026-02-30",
    "2026-11-30T25:00",
    "yesterday",
    "1e10",
    "+10000-01-01",
    "2026-11-30T14:00:00+25:00",
]
SURROGATE_STRINGS = ["\ud800", "lone \udfff surrogate", "\udcff\udcfe", "pair\ud83d"]
FACTS = [
    "User prefers dark roast coffee",
    "Deploys go out on Fridays from us-east-1",
    "Ünïcödé fact: naïve café 日本語 🙂",
    "The build server is ci-01.internal:8443",
    "Tabs, not spaces",
    "the the the and of",
    "ok",
]


def _text(surrogates: bool, max_size: int = 40) -> st.SearchStrategy[str]:
    return st.text(st.characters(codec=None, exclude_categories=() if surrogates else ("Cs",)), max_size=max_size)


def hostile(surrogates: bool) -> st.SearchStrategy[str]:
    pool = HOSTILE_STRINGS + (SURROGATE_STRINGS if surrogates else [])
    return st.one_of(st.sampled_from(pool), _text(surrogates))


def wrong_types(python_only: bool) -> st.SearchStrategy[Any]:
    """Values of the wrong JSON type; `python_only` adds what only a Python caller can pass."""
    scalars = st.one_of(
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30]),
    )
    nested = st.recursive(
        st.one_of(st.integers(), st.none(), st.text(max_size=4), st.booleans()),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
        max_leaves=6,
    )
    extra = [st.sampled_from([b"bytes", (1, 2), 10**5000, -(10**5000), object()])] if python_only else []
    return st.one_of(scalars, nested, st.just({"a": [1, {"b": None}]}), st.just([[["deep"]]]), *extra)


@dataclass(frozen=True)
class Vocabulary:
    """Per-tool calls: a plausible call with up to two arguments swapped for hostile values or left out.

    `json_only` for callers that go through an MCP transport (no lone surrogates, no Python objects).
    """

    json_only: bool

    def specs(self) -> dict[str, dict[str, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any], bool]]]:
        """Per tool and argument: (plausible values, edge values, required)."""
        surrogates = not self.json_only
        dates = st.sampled_from(
            [
                "2026-11-30",
                "2023-06-10T18:00:00Z",
                "2026-11-30T14:00:00+05:30",
                "1970-01-01",
                "2000-02-29T23:59:59.999999",
            ]
        )
        odd_dates = st.sampled_from(
            [
                "0001-01-01",
                "9999-12-31",
                "9999-12-31T23:59:59-14:00",
                "0001-01-01T00:00:00+14:00",
                "2026-13-01",
                " 2026-11-30 ",
                "1969-12-31T23:59:59Z",
            ]
        )
        namespace = st.sampled_from(["default", "default", "fuzz", "a.b:c-d_e", "Z9", "a" * 64])
        odd_namespace = st.sampled_from(["a" * 65, "*", "-x", "", "white space", "ünï"])
        printable = st.text(st.characters(codec=None, exclude_categories=("Cc", "Cs")), min_size=1, max_size=300)
        text = st.one_of(
            st.sampled_from(FACTS),
            printable,
            printable,
            st.sampled_from(HOSTILE_STRINGS).filter(
                lambda t: (
                    t.strip()
                    and not any(unicodedata.category(c) == "Cc" and c not in "\t\n\r" for c in t)
                    and len(t.encode()) <= 65_536
                )
            ),
        )
        known_job = st.builds(Known, st.just("job"), st.integers(0, 999))
        job_id = st.one_of(known_job, known_job, known_job, st.just("j_0123456789abcdef"))
        odd_job_id = st.one_of(st.sampled_from(["", "x" * 64, "x" * 65]), _text(surrogates, 10))
        memory_id = st.one_of(st.builds(Known, st.just("memory"), st.integers(0, 999)), st.just("m_0123456789abcdef"))
        odd_memory_id = st.sampled_from(["x" * 64, "x" * 65, "m_../../x", "", "m_0123456789abcdef\n"])
        cursor = st.builds(Known, st.just("cursor"), st.integers(0, 999))
        odd_cursor = st.sampled_from(
            [
                b64("abc"),
                b64("nan:1"),
                b64("1e999:-1"),
                b64("-1e999:0"),
                b64("1.0:99999999999999999999999"),
                b64("1.0:-9223372036854775809"),
                b64(":"),
                "=",
                "!!!",
                "x" * 300,
                b64("1.0:1") + "é",
            ]
        )
        limit, odd_limit = st.sampled_from([1, 5, 20, 100]), st.sampled_from([0, 101, -1, 2**63])
        wait, odd_wait = st.sampled_from([0, 0, 0, 1, 250, 30_000]), st.sampled_from([30_001, -1, 2**64])
        return {
            "memwal_remember": {
                "text": (text, st.sampled_from(HOSTILE_STRINGS), True),
                "namespace": (namespace, odd_namespace, False),
                "idempotency_key": (
                    st.sampled_from(["k1", "k2", "k3", "x" * 256]),
                    st.sampled_from(["x" * 257, " ", "k\nnewline", ""]),
                    False,
                ),
                "wait_ms": (wait, odd_wait, False),
                "occurred_at": (dates, odd_dates, False),
            },
            "memwal_remember_status": {
                "job_ids": (
                    st.lists(job_id, min_size=1, max_size=5),
                    st.one_of(
                        st.lists(st.one_of(job_id, odd_job_id), max_size=52), st.just(["j_0123456789abcdef"] * 60)
                    ),
                    True,
                ),
                "wait_ms": (st.sampled_from([0, 1, 500]), odd_wait, False),
            },
            "memwal_recall": {
                "query": (
                    st.one_of(st.sampled_from(["coffee", "deploy friday", "日本語", "the", "ci-01"]), text),
                    st.sampled_from(HOSTILE_STRINGS),
                    True,
                ),
                "limit": (limit, odd_limit, False),
                "namespace": (st.one_of(namespace, st.just("*")), odd_namespace, False),
                "min_score": (st.sampled_from([0, 0.0, 0.5, 1, 1e-300]), st.sampled_from([1.0001, -1e-9, 2]), False),
                "since": (dates, odd_dates, False),
                "until": (dates, odd_dates, False),
                "prefer_recent": (st.booleans(), st.sampled_from([0, 1, "true"]), False),
            },
            "memwal_list": {
                "namespace": (st.one_of(namespace, st.just("*")), odd_namespace, False),
                "cursor": (cursor, odd_cursor, False),
                "limit": (limit, odd_limit, False),
            },
            "memwal_history": {"memory_id": (memory_id, odd_memory_id, True)},
            # Mostly ids that are not there: forgetting everything would leave little to check afterwards.
            "memwal_forget": {
                "memory_id": (
                    st.one_of(memory_id, st.just("m_0123456789abcdef"), st.just("m_fedcba9876543210")),
                    odd_memory_id,
                    True,
                )
            },
        }

    def call(self) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        specs = self.specs()
        bad = st.one_of(hostile(not self.json_only), wrong_types(not self.json_only))

        @st.composite
        def one(draw: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
            tool = draw(st.sampled_from((*TOOLS, "memwal_remember", "memwal_remember", "memwal_recall")))
            spec = specs[tool]
            corrupt = draw(st.sets(st.sampled_from(sorted(spec)), max_size=2))
            arguments: dict[str, Any] = {}
            for name, (valid, edge, required) in spec.items():
                if name in corrupt:
                    # Over MCP a required argument can be missing too; in-process that is a TypeError by design.
                    options = [edge, bad] + ([st.just(MISSING)] if not required or self.json_only else [])
                    value = draw(st.one_of(*options))
                else:
                    value = draw(st.one_of(valid, valid, st.just(MISSING)) if not required else valid)
                if value is not MISSING:
                    arguments[name] = value
            return tool, arguments

        return one()


# --- bugs already known --------------------------------------------------------------------
# None at the moment. When a fuzz run finds one, skip its inputs here (so the run goes on
# exploring) and pin the bug by a strict xfail test at the bottom of this file.


def known_bug(tool: str, arguments: dict[str, Any]) -> str | None:
    return None


def check_message(message: str, what: str) -> None:
    assert message.strip(), f"empty error message for {what}"
    assert len(message) <= MAX_MESSAGE, f"{len(message)}-character error message for {what}: {message[:300]}..."
    assert not INTERNALS.search(message), f"internal detail in the error for {what}: {message[:500]}"


# --- the run ---------------------------------------------------------------------------------


@dataclass
class FuzzLog:
    """What the service accepted, to check that it was stored faithfully."""

    accepted: dict[str, tuple[str, str]] = field(default_factory=dict)  # job id -> (namespace, text)
    memories: list[str] = field(default_factory=list)
    forgotten: set[str] = field(default_factory=set)
    cursors: list[str] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Known):
            pool = {"job": list(self.accepted), "memory": self.memories, "cursor": self.cursors}[value.kind]
            fallback = {"job": "j_ffffffffffffffff", "memory": "m_ffffffffffffffff", "cursor": b64("1.0:1")}
            return pool[value.pick % len(pool)] if pool else fallback[value.kind]
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        return value

    def count(self, key: str) -> None:
        self.outcomes[key] = self.outcomes.get(key, 0) + 1


def _defaults(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The MCP tools' defaults for arguments left out (required ones are never left out in-process)."""
    defaults = {
        "memwal_remember": {"namespace": "default", "idempotency_key": None, "wait_ms": 0, "occurred_at": None},
        "memwal_remember_status": {"wait_ms": 0},
        "memwal_recall": {
            "limit": 5,
            "namespace": "default",
            "min_score": None,
            "since": None,
            "until": None,
            "prefer_recent": False,
        },
        "memwal_list": {"namespace": "*", "cursor": None, "limit": 20},
    }.get(tool, {})
    return {**defaults, **arguments}


async def call_service(service: MemoryService, tool: str, arguments: dict[str, Any], log: FuzzLog) -> str:
    """One call; returns the reply text. Raises MemwalError for a refusal, anything else is a bug."""
    a = _defaults(tool, arguments)
    if tool == "memwal_remember":
        outcome = await service.remember(
            OWNER, a["text"], a["namespace"], a["idempotency_key"], a["wait_ms"], a["occurred_at"]
        )
        out = RememberOut(**JobOut.of(outcome.job).model_dump(), replayed=outcome.replayed)
        if not outcome.replayed:
            log.accepted[outcome.job.id] = (outcome.job.namespace, a["text"])
            assert outcome.job.text == a["text"]
        return job_line(out)
    if tool == "memwal_remember_status":
        jobs = await service.status(OWNER, a["job_ids"], a["wait_ms"])
        out = StatusOut(jobs=[JobOut.of(job) for job in jobs])
        log.memories += [job.memory_id for job in jobs if job.memory_id and job.memory_id not in log.memories]
        return "\n".join(job_line(job) for job in out.jobs)
    if tool == "memwal_recall":
        result = await service.recall(
            OWNER, a["query"], a["limit"], a["namespace"], a["min_score"], a["since"], a["until"], a["prefer_recent"]
        )
        RecallOut.of(result)
        assert len({normalize_text(hit.text) for hit in result.hits}) == len(result.hits)
        assert all(0.0 <= hit.score <= 1.0 or math.isclose(hit.score, 1.0) for hit in result.hits), result.hits
        return recall_text(result)
    if tool == "memwal_list":
        page = await service.list(OWNER, a["namespace"], a["cursor"], a["limit"])
        out = ListOut.of(page)
        if page.next_cursor:
            log.cursors.append(page.next_cursor)
        log.memories += [item.id for item in page.items if item.id not in log.memories]
        return list_text(out)
    if tool == "memwal_history":
        return history_text(HistoryOut.of(await service.history(OWNER, a["memory_id"])))
    if tool == "memwal_forget":
        out = ForgetOut.of(await service.forget(OWNER, a["memory_id"]))
        log.forgotten.update(out.erased_memories)
        return f"Forgot {out.memory_id}"
    raise AssertionError(tool)


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int too long to print
        return f"<int of {value.bit_length()} bits>"
    return text if len(text) < 100 else text[:80] + "..."


async def fuzz_one(service: MemoryService, tool: str, raw: dict[str, Any], log: FuzzLog) -> None:
    arguments = {name: log.resolve(value) for name, value in raw.items()}
    bug = known_bug(tool, arguments)
    if bug is not None:
        log.skipped[bug] = log.skipped.get(bug, 0) + 1
        return
    what = f"{tool}({', '.join(f'{k}={_short(v)}' for k, v in arguments.items())})"
    with anyio.fail_after(45):
        try:
            text = await call_service(service, tool, arguments, log)
        except MemwalError as exc:
            check_message(str(exc), what)
            log.count(f"{tool}: {type(exc).__name__}")
            return
    assert "Traceback" not in text
    log.count(f"{tool}: ok")


async def verify_faithful(service: MemoryService, log: FuzzLog) -> None:
    """Every accepted text is curated and comes back byte for byte from list (and recall finds short ones)."""
    ids = list(log.accepted)
    done: dict[str, Any] = {}
    with anyio.fail_after(90):
        for start in range(0, len(ids), 50):
            for job in await service.status(OWNER, ids[start : start + 50], 30_000):
                done[job.id] = job
    assert all(job.status == "done" for job in done.values()), [j for j in done.values() if j.status != "done"]
    listed: dict[str, str] = {}
    cursor = None
    while True:
        page = await service.list(OWNER, "*", cursor, 100)
        listed.update({item.id: item.text for item in page.items})
        cursor = page.next_cursor
        if cursor is None:
            break
    for job_id, (_namespace, text) in log.accepted.items():
        job = done[job_id]
        if job.memory_id in log.forgotten or job.decision == "forgotten":
            continue
        assert job.memory_id in listed, (job_id, text[:80])
        body = listed[job.memory_id]
        if job.decision == "created":
            assert body == text, f"stored {body[:80]!r}, was given {text[:80]!r}"
        else:
            assert normalize_text(body) == normalize_text(text)
    # Recall by exact text, for texts with real words (runs of characters the model does not know all embed
    # alike, so for those "first among equals" is not a fair ask).
    sample = [
        (ns, text)
        for job_id, (ns, text) in log.accepted.items()
        if done[job_id].decision == "created"
        and done[job_id].memory_id not in log.forgotten
        and len(text.encode()) <= 4096
        and len(re.findall(r"[A-Za-z]{3,}", text)) >= 2
    ][:25]
    for namespace, text in sample:
        result = await service.recall(OWNER, text, limit=10, namespace=namespace)
        assert text in [hit.text for hit in result.hits], (text[:80], [hit.text[:40] for hit in result.hits])


def run_check(db_path: Path) -> None:
    done = subprocess.run([str(MEMWAL), "check", "--db", str(db_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _settings(db_path: Path) -> Settings:
    return load_settings(db_path=db_path)


@pytest.mark.slow
def test_fuzz_every_tool_in_process(tmp_path: Path, embedder: FastEmbedEmbedder) -> None:
    db_path = tmp_path / "fuzz.db"
    log = FuzzLog()
    calls = Vocabulary(json_only=False).call()
    with start_blocking_portal() as portal:
        service = MemoryService(_settings(db_path), embedder=embedder)
        portal.call(service.start)
        try:

            @settings(
                max_examples=1000,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(batch=st.lists(calls, min_size=1, max_size=4))
            def fuzz(batch: list[tuple[str, dict[str, Any]]]) -> None:
                for tool, arguments in batch:
                    portal.call(fuzz_one, service, tool, arguments, log)

            fuzz()
            # Still serving after all of that, and everything accepted is intact.
            alive = portal.call(lambda: service.remember(OWNER, "The service is still alive", wait_ms=10_000))
            assert alive.job.status == "done"
            log.accepted[alive.job.id] = ("default", "The service is still alive")
            portal.call(verify_faithful, service, log)
        finally:
            portal.call(service.close)
    run_check(db_path)
    accepted = sum(n for k, n in log.outcomes.items() if k.endswith(": ok"))
    print("fuzz outcomes:", dict(sorted(log.outcomes.items())), "skipped (known bugs):", log.skipped)
    assert log.outcomes.get("memwal_remember: ok", 0) >= 40 and accepted >= 200, log.outcomes
    assert len(log.outcomes) >= 10, log.outcomes


# --- the known bugs, one failing test each ------------------------------------------------------------


@pytest.fixture
async def fuzz_service(make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder):
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running():
        await svc.remember(OWNER, "A fact so that searches have something to find", wait_ms=10_000)
        yield svc


async def _cleanly(coro) -> object:
    """The outcome must be a result or a MemwalError with a clean message; anything else fails the test."""
    try:
        return await coro
    except MemwalError as exc:
        check_message(str(exc), "the call")
        return exc


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
async def test_occurred_at_outside_the_calendar_is_refused_or_rendered(fuzz_service: MemoryService, when: str) -> None:
    outcome = await _cleanly(
        fuzz_service.remember(OWNER, "A fact from the edge of time", occurred_at=when, wait_ms=10_000)
    )
    if not isinstance(outcome, MemwalError):
        JobOut.of(outcome.job)
    result = await fuzz_service.recall(OWNER, "edge of time", limit=5)
    recall_text(result)
    RecallOut.of(result)
    ListOut.of(await fuzz_service.list(OWNER))


async def test_until_the_last_day_of_the_calendar_is_clean(fuzz_service: MemoryService) -> None:
    await _cleanly(fuzz_service.recall(OWNER, "fact", until="9999-12-31"))


async def test_a_forged_cursor_with_a_huge_position_is_refused(fuzz_service: MemoryService) -> None:
    await _cleanly(fuzz_service.list(OWNER, cursor=b64("1.0:99999999999999999999999")))


@pytest.mark.parametrize("argument", ["limit", "min_score", "wait_ms", "namespace", "memory_id"])
async def test_a_huge_integer_argument_is_refused_cleanly(fuzz_service: MemoryService, argument: str) -> None:
    huge = 10**5000
    if argument == "wait_ms":
        outcome = await _cleanly(fuzz_service.remember(OWNER, "A fact", wait_ms=huge))
    elif argument == "memory_id":
        outcome = await _cleanly(fuzz_service.history(OWNER, huge))
    else:
        outcome = await _cleanly(fuzz_service.recall(OWNER, "fact", **{argument: huge}))
    assert isinstance(outcome, InvalidInput)


async def test_a_job_id_with_a_lone_surrogate_is_refused_cleanly(fuzz_service: MemoryService) -> None:
    outcome = await _cleanly(fuzz_service.status(OWNER, ["\ud800"]))
    assert isinstance(outcome, (NotFound, InvalidInput))


@pytest.mark.parametrize("argument", ["namespace", "limit", "wait_ms"])
async def test_the_error_for_a_huge_value_is_a_sentence_not_an_echo(fuzz_service: MemoryService, argument: str) -> None:
    huge = "n" * 70_000
    if argument == "wait_ms":
        outcome = await _cleanly(fuzz_service.remember(OWNER, "A fact", wait_ms=huge))
    elif argument == "limit":
        outcome = await _cleanly(fuzz_service.recall(OWNER, "fact", limit=huge))
    else:
        outcome = await _cleanly(fuzz_service.remember(OWNER, "A fact", namespace=huge))
    assert isinstance(outcome, InvalidInput)
