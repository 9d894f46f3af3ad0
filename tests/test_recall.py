"""memwal_recall through the real MemoryService and the real bundled model.

Covers the acceptance scenario (collapse + say what was collapsed), back-fill after
collapse, scores, namespaces, owner walls, read-your-writes, hostile queries and
the lexical path with embeddings disabled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memwal_mcp.config import Settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.normalize import normalize_text
from memwal_mcp.recall.format import recall_text
from memwal_mcp.records import RecallResult
from memwal_mcp.service import MemoryService

COFFEE = "User prefers dark roast coffee"
NOTE_4 = "(4 duplicate copies of the above collapsed; the same fact is stored more than once.)"
OTHERS = [
    "Deploys go out on Fridays from us-east-1",
    "The project database is PostgreSQL 16",
    "The user's cat is named Miso",
    "Team standup is at 9:30 every morning",
]
SIX_OTHERS = [
    *OTHERS,
    "The office wifi network is called Falcon",
    "Invoices are due within 30 days",
]
# Nothing to do with coffee (bundled model: scores under 0.08 for the coffee queries here).
UNRELATED = [
    "Deploys go out on Fridays from us-east-1",
    "The project database is PostgreSQL 16",
    "Invoices are due within 30 days",
    "The wifi password policy changed in 2025",
    "Alice's birthday is on 2026-03-14",
]
# About coffee or drinks without being the same fact: what back-fill may return for "coffee".
RELATED = [
    "Bob likes his coffee black",
    "Coffee machine in the office is broken",
    "Espresso beans are ordered every Monday",
    "The user drinks green tea in the afternoon",
]

HOSTILE_QUERIES = [
    'coffee" OR "',
    '"coffee',
    '"',
    '""',
    "'",
    "coffee AND",
    "OR",
    "NOT coffee",
    "AND OR NOT NEAR",
    "NEAR(coffee roast, 2)",
    "NEAR(",
    "(coffee",
    "coffee)",
    "((()))",
    "coffee*",
    "*",
    "^coffee",
    "body:coffee",
    ":",
    "{body}: coffee",
    "- coffee",
    "+coffee",
    "coffee -roast",
    "col:umn:x",
    "a_b__c",
    "_",
    "%_%",
    "\\",
    "'; DROP TABLE memories; --",
    "珈琲が好きです",
    "Кофе",
    "قهوة",
    "कॉफ़ी",
    "☕",
    "☕🔥👩‍💻",
    "e\u0301",
    "ǰ ﬁ Ⅻ",
    "x" * 300,
    "coffee " * 200,
]


def texts(result: RecallResult) -> list[str]:
    return [hit.text for hit in result.hits]


async def remember_all(svc: MemoryService, owner: str, facts: list[str], namespace: str | None = None) -> None:
    ids = [(await svc.remember(owner, fact, namespace=namespace)).job.id for fact in facts]
    jobs = await svc.status(owner, ids, wait_ms=10000)
    assert all(job.status == "done" for job in jobs), jobs


# --- the acceptance scenario -------------------------------------------------


async def test_acceptance_duplicates_collapsed_and_said(service: MemoryService) -> None:
    for _ in range(5):
        await service.remember("local", COFFEE)
    for fact in [*RELATED, *OTHERS]:
        await service.remember("local", fact)

    result = await service.recall("local", "coffee", limit=5)

    assert len(result.hits) == 5
    assert len({normalize_text(t) for t in texts(result)}) == 5
    assert set(texts(result)) == {COFFEE, *RELATED}  # the unrelated OTHERS do not pad the reply
    assert result.hits[0].text == COFFEE
    assert result.hits[0].copies == 4
    assert all(hit.copies == 0 for hit in result.hits[1:])
    assert result.collapsed == 4

    lines = recall_text(result).splitlines()
    coffee_line = next(i for i, line in enumerate(lines) if line.endswith(COFFEE))
    assert lines[coffee_line].startswith("1. [score=")
    assert lines[coffee_line + 1] == NOTE_4
    assert lines.count(NOTE_4) == 1
    assert sum(1 for line in lines if line[:1].isdigit()) == 5


# --- back-fill after collapse ------------------------------------------------


async def test_backfill_fills_the_limit_with_distinct_facts(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(curation={"enabled": False}), embedder=embedder)
    async with svc.running():
        await remember_all(svc, "local", [COFFEE] * 30 + RELATED + UNRELATED)

        result = await svc.recall("local", "dark roast coffee", limit=5)
        assert len(result.hits) == 5
        assert len({normalize_text(t) for t in texts(result)}) == 5
        assert result.hits[0].text == COFFEE
        assert result.hits[0].copies == 29

        # Every relevant fact, none of the unrelated ones: back-fill is not "anything stored".
        everything = await svc.recall("local", "dark roast coffee", limit=20)
        assert sorted(texts(everything)) == sorted([COFFEE, *RELATED])
        assert everything.hits[0].copies == 29

        exact = await svc.recall("local", "dark roast coffee", limit=5)
        assert sorted(texts(exact)) == sorted([COFFEE, *RELATED])

        # An explicit min_score replaces the relevance rule: then every fact is a candidate.
        anything = await svc.recall("local", "dark roast coffee", limit=20, min_score=0)
        assert sorted(texts(anything)) == sorted([COFFEE, *RELATED, *UNRELATED])


# --- scores ------------------------------------------------------------------


async def test_scores_are_in_unit_range_best_first_and_min_score_filters(service: MemoryService) -> None:
    await remember_all(service, "local", [COFFEE, *RELATED, *SIX_OTHERS])
    result = await service.recall("local", "which coffee does the user like", limit=10)
    scores = [hit.score for hit in result.hits]
    assert len(scores) >= 5
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert result.hits[0].text == COFFEE
    assert scores[0] > scores[1]

    floor = (scores[0] + scores[1]) / 2
    filtered = await service.recall("local", "which coffee does the user like", limit=10, min_score=floor)
    assert texts(filtered) == [COFFEE]
    assert filtered.hits[0].score == pytest.approx(scores[0])

    floor = (scores[2] + scores[3]) / 2
    filtered = await service.recall("local", "which coffee does the user like", limit=10, min_score=floor)
    assert texts(filtered) == texts(result)[:3]

    zero = await service.recall("local", "which coffee does the user like", limit=20, min_score=0)
    assert texts(zero)[: len(scores)] == texts(result)
    assert len(zero.hits) == 11  # min_score replaces the relevance rule

    nothing = await service.recall("local", "which coffee does the user like", limit=10, min_score=1.0)
    assert all(hit.score >= 1.0 for hit in nothing.hits)
    assert COFFEE not in texts(nothing) or nothing.hits[0].score >= 1.0


async def test_a_score_depends_only_on_its_own_namespace(service: MemoryService) -> None:
    """What an owner keeps in other namespaces never moves a memory's score or ranking in its
    own; and recalling every namespace gives each memory the score it has in its own."""
    await remember_all(service, "local", [COFFEE, *OTHERS], namespace="first")
    alone = await service.recall("local", "coffee roast", namespace="first", limit=5)
    siblings = [f"Coffee note {i}: the roast of batch {i} was {'dark' if i % 2 else 'light'}" for i in range(40)]
    await remember_all(service, "local", siblings, namespace="second")
    await remember_all(service, "local", ["Roast chicken on Sundays", "The printer is on floor 3"], namespace="third")
    beside = await service.recall("local", "coffee roast", namespace="first", limit=5)
    everywhere = await service.recall("local", "coffee roast", namespace="*", limit=50)
    assert texts(alone)[0] == COFFEE
    assert [(h.id, h.score) for h in beside.hits] == [(h.id, pytest.approx(h.score, abs=1e-9)) for h in alone.hits]
    in_first = {h.id: h.score for h in everywhere.hits if h.namespace == "first"}
    assert {h.id: h.score for h in alone.hits} == pytest.approx(in_first, abs=1e-9)


async def test_a_small_limit_returns_the_top_of_a_large_one(service: MemoryService) -> None:
    """The pools a recall starts from are cut by each signal alone (BM25 favours short texts
    the length factor then discounts): it widens them until nothing outside could outscore the
    limit-th fact, in one namespace and across several."""
    carol = "Carol drinks green tea after her long lunch"
    await remember_all(service, "local", [carol, *[f"Tea {i}" for i in range(40)]], namespace="a")
    for start in (40, 80):
        await remember_all(service, "local", [f"Tea {i}" for i in range(start, start + 40)], namespace="a")
    long_notes = [
        f"Meeting notes from the quarterly planning session with the sales team, part {i}" for i in range(100)
    ]
    for start in (0, 50):
        await remember_all(service, "local", long_notes[start : start + 50], namespace="a")
    for n in range(4):
        await remember_all(service, "local", [f"Tea {n}-{i} with lemon" for i in range(40)], namespace=f"n{n}")
    for namespace in ("a", "*"):
        everything = await service.recall("local", "tea", namespace=namespace, limit=100)
        assert namespace == "*" or carol in texts(everything)
        for limit in (1, 5, 20):
            top = await service.recall("local", "tea", namespace=namespace, limit=limit)
            assert [h.score for h in top.hits] == [h.score for h in everything.hits[:limit]], (namespace, limit)


async def test_a_queued_fact_does_not_move_the_scores_of_curated_memories(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    """A queued fact is scored over the statistics its namespace will have once it is in; the
    memories already there keep the scores they have now (the same as before it was queued)."""
    settings = make_settings(recall={"read_your_writes_wait_ms": 0})
    curated = MemoryService(settings, embedder=embedder)
    async with curated.running():
        await remember_all(curated, "local", [COFFEE, *SIX_OTHERS, "Carol drinks tea, never coffee"])
        before = await curated.recall("local", "coffee", limit=10)
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", "Coffee beans are in the tin")
        during = await svc.recall("local", "coffee", limit=10)
    assert "Coffee beans are in the tin" in texts(during)
    was = {h.id: h.score for h in before.hits}
    assert {h.id: h.score for h in during.hits if not h.pending} == pytest.approx(was, abs=1e-9)


# --- namespaces and owners ---------------------------------------------------


async def test_namespaces_are_separate(service: MemoryService) -> None:
    await remember_all(service, "local", ["Work laptop is a ThinkPad X1"], namespace="work")
    await remember_all(service, "local", ["Home laptop is a MacBook Air"], namespace="home")
    work = await service.recall("local", "laptop", namespace="work", limit=10)
    home = await service.recall("local", "laptop", namespace="home", limit=10)
    default = await service.recall("local", "laptop", limit=10)
    assert texts(work) == ["Work laptop is a ThinkPad X1"]
    assert texts(home) == ["Home laptop is a MacBook Air"]
    assert all(hit.namespace == "work" for hit in work.hits)
    assert texts(default) == []


async def test_owners_are_walls(service: MemoryService) -> None:
    alice_facts = ["Alice prefers dark roast coffee", "Alice's dentist appointment is on 2025-03-14"]
    await remember_all(service, "alice", alice_facts, namespace="shared")

    empty = await service.recall("bob", "coffee", namespace="shared", limit=10)
    assert empty.hits == []
    for query in ["Alice prefers dark roast coffee", "dentist", "coffee"]:
        assert (await service.recall("bob", query, namespace="shared", limit=100)).hits == []

    await remember_all(service, "bob", ["Bob prefers green tea"], namespace="shared")
    bob = await service.recall("bob", "Alice prefers dark roast coffee", namespace="shared", limit=100)
    assert texts(bob) == ["Bob prefers green tea"]
    alice = await service.recall("alice", "Alice prefers dark roast coffee", namespace="shared", limit=100)
    assert sorted(texts(alice)) == sorted(alice_facts)


async def test_owners_are_walls_for_pending_jobs(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(recall={"read_your_writes_wait_ms": 100}), embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("alice", "Alice prefers dark roast coffee")
        await svc.remember("bob", "Bob prefers green tea")
        bob = await svc.recall("bob", "prefers coffee tea", limit=100)
        alice = await svc.recall("alice", "prefers coffee tea", limit=100)
    assert texts(bob) == ["Bob prefers green tea"]
    assert texts(alice) == ["Alice prefers dark roast coffee"]


# --- read-your-writes --------------------------------------------------------


async def test_read_your_writes_with_a_worker(service: MemoryService) -> None:
    await remember_all(service, "local", OTHERS)
    await service.remember("local", COFFEE)  # no wait
    result = await service.recall("local", "coffee")
    assert result.hits[0].text == COFFEE


async def test_read_your_writes_without_a_worker_uses_pending_jobs(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    svc = MemoryService(make_settings(recall={"read_your_writes_wait_ms": 200}), embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", COFFEE)
        await svc.remember("local", "Deploys go out on Fridays")
        started = time.monotonic()
        result = await svc.recall("local", "coffee")
        elapsed = time.monotonic() - started
    # Both facts are still queued; the unrelated one is left out, as a curated one would be.
    assert texts(result) == [COFFEE]
    assert all(hit.pending for hit in result.hits)
    assert 0 <= result.hits[0].score <= 1
    assert 0.15 <= elapsed < 1.5
    assert "[pending]" in recall_text(result)


async def test_read_your_writes_pending_fallback_with_vectors(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings(recall={"read_your_writes_wait_ms": 200})
    curated = MemoryService(settings, embedder=embedder)
    async with curated.running():
        await remember_all(curated, "local", OTHERS)  # the database now holds vectors

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", COFFEE)
        await svc.remember("local", COFFEE)  # a repeat, also pending
        started = time.monotonic()
        result = await svc.recall("local", "a hot drink the user likes", limit=5)
        elapsed = time.monotonic() - started
    assert result.hits[0].text == COFFEE
    assert result.hits[0].pending is True
    assert result.hits[0].copies == 1
    assert [hit.pending for hit in result.hits[1:]] == [False] * (len(result.hits) - 1)
    assert "Deploys go out on Fridays from us-east-1" not in texts(result)
    assert 0.15 <= elapsed < 1.5


# --- hostile queries ---------------------------------------------------------


async def _hostile_queries_never_raise(svc: MemoryService) -> None:
    for query in HOSTILE_QUERIES:
        result = await svc.recall("local", query, limit=10)
        assert all(0.0 <= hit.score <= 1.0 for hit in result.hits), query
        assert isinstance(recall_text(result), str)
        for floor in (0.0, 0.5):
            await svc.recall("local", query, limit=3, min_score=floor)


async def test_hostile_queries_with_the_embedder(service: MemoryService) -> None:
    await remember_all(service, "local", [COFFEE, *OTHERS, "Kaffee: dunkle Röstung", "珈琲はブラック"])
    await _hostile_queries_never_raise(service)


@pytest.mark.parametrize("embedding_model", ["none", "NONE"])
async def test_hostile_queries_and_word_search_without_embeddings(
    make_settings: Callable[..., Settings], embedding_model: str
) -> None:
    svc = MemoryService(make_settings(embedding={"model": embedding_model}))
    async with svc.running():
        await remember_all(svc, "local", [COFFEE, *OTHERS, "Kaffee: dunkle Röstung", "Кофе без сахара"])
        assert await svc.embedder.get() is None

        await _hostile_queries_never_raise(svc)

        result = await svc.recall("local", "coffee")
        assert texts(result) == [COFFEE]
        assert 0 < result.hits[0].score <= 1
        # Operators are words to look for, not syntax.
        for query in ['"coffee', 'coffee" OR "', "coffee*", "body:coffee", "NEAR(coffee roast)", "(coffee"]:
            assert COFFEE in texts(await svc.recall("local", query)), query
        assert texts(await svc.recall("local", "кофе")) == ["Кофе без сахара"]
        assert texts(await svc.recall("local", "rostung")) == ["Kaffee: dunkle Röstung"]
        assert (await svc.recall("local", "AND OR NOT")).hits == []
        assert (await svc.recall("local", "☕")).hits == []
        # Words whose full case folding differs from the index's (ß -> ss, ﬁ -> fi, İ -> i̇)
        # are found as typed, and in another case.
        odd = ["Die Straße ist gesperrt", "The ﬁnance review is on Monday", "Flights to İstanbul are booked"]
        await remember_all(svc, "local", odd)
        for query, fact in [("Straße", odd[0]), ("STRAßE", odd[0]), ("ﬁnance", odd[1]), ("İstanbul", odd[2])]:
            assert texts(await svc.recall("local", query)) == [fact], query


async def test_equal_scores_rank_the_fact_stored_later_first_in_every_store(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """One remember_many stores its facts in one instant, so among equal word scores neither the
    date nor the (random) id may decide: two stores of the same facts rank them alike."""
    facts = [f"Widget {name} ships in a blue box" for name in "ABCDEFGH"]
    answers = []
    for run in range(2):
        svc = MemoryService(make_settings(db_path=tmp_path / f"run{run}.db", embedding={"model": "none"}))
        async with svc.running():
            await svc.remember_many("local", [{"text": fact} for fact in facts], wait_ms=10_000)
            result = await svc.recall("local", "blue widget box", limit=4)
        assert len({hit.score for hit in result.hits}) == 1  # a tie, or this tests nothing
        answers.append(texts(result))
    assert answers[0] == answers[1] == facts[::-1][:4]


# --- empty -------------------------------------------------------------------


async def test_empty_lane_gives_an_empty_result(service: MemoryService) -> None:
    result = await service.recall("local", "coffee")
    assert result.hits == []
    assert result.collapsed == 0
    assert "No memories match" in recall_text(result)
    assert "'coffee'" in recall_text(result)

    await remember_all(service, "local", [COFFEE], namespace="elsewhere")
    other = await service.recall("local", "coffee", namespace="empty-ns")
    assert other.hits == []
    assert "No memories match" in recall_text(other) and "'empty-ns'" in recall_text(other)


async def test_a_long_query_that_finds_nothing_is_not_echoed_whole(service: MemoryService) -> None:
    """A 4 KB query that matched nothing came back whole in the reply, whatever max_chars said."""
    query = " ".join(f"zebra{i}" for i in range(500))[:4000]
    result = await service.recall("local", query, max_chars=100)
    text = recall_text(result)
    assert result.hits == [] and text.startswith("No memories match 'zebra0 zebra1") and len(text) < 120, text
