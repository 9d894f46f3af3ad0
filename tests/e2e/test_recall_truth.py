"""memwal_recall tells the truth, through the real MCP client over stdio and the CLI:
back-fill returns relevant facts only, `copies` counts what is stored, an LLM's SKIP is
reported as such, time windows see every dated occurrence, 1970 is a date, read-your-writes
holds across namespaces with a backlog, and a queued fact scores what its memory will."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.scripted_llm import Reply, ScriptedLLM

from .conftest import MEMWAL, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

COFFEE = "User prefers dark roast coffee"
RELATED = [
    "Bob likes his coffee black",
    "Coffee machine in the office is broken",
    "Espresso beans are ordered every Monday",
]
# Nothing to do with coffee: each scored 0.000-0.071 for "coffee" or "coffee machine" and was
# still returned (or erased by forget --query) to fill the limit.
UNRELATED = [
    "The wifi password policy changed in 2025",
    "Alice's birthday is on 2026-03-14",
    "Deploys go out on Fridays from us-east-1",
    "Invoices are due within 30 days",
]


async def remember(session: Any, text: str, **arguments: Any) -> str:
    result = await session.call_tool("memwal_remember", {"text": text, **arguments})
    assert not result.is_error, tool_text(result)
    return result.structured_content["job_id"]


async def wait_done(session: Any, job_ids: list[str]) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = []
    for start in range(0, len(job_ids), 50):
        status = await session.call_tool(
            "memwal_remember_status", {"job_ids": job_ids[start : start + 50], "wait_ms": 30000}
        )
        assert not status.is_error, tool_text(status)
        jobs += status.structured_content["jobs"]
    assert all(job["status"] == "done" for job in jobs), [job for job in jobs if job["status"] != "done"][:3]
    return jobs


async def recall(session: Any, query: str, **arguments: Any) -> tuple[str, list[dict[str, Any]]]:
    result = await session.call_tool("memwal_recall", {"query": query, **arguments})
    assert not result.is_error, tool_text(result)
    return tool_text(result), result.structured_content["hits"]


def cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(MEMWAL), *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


# --- D17 / D6: back-fill returns relevant facts, not anything -----------------------------


async def test_recall_leaves_unrelated_facts_out_and_min_score_overrides(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await wait_done(session, [await remember(session, text) for text in [COFFEE, *RELATED, *UNRELATED]])

            text, hits = await recall(session, "coffee", limit=10)
            assert {hit["text"] for hit in hits} == {COFFEE, *RELATED}, text
            assert not any(fact in text for fact in UNRELATED), text

            # min_score in the call replaces the relevance rule: a plain score filter.
            _, everything = await recall(session, "coffee", limit=10, min_score=0)
            assert {hit["text"] for hit in everything} == {COFFEE, *RELATED, *UNRELATED}

            # Nothing to search for: no hits, and the reply says why. Invisible-only text is refused
            # by the text policy before the search, by name; visible text with no word finds nothing.
            for query in ["\u200b\u200b\u200b", "\u200b", "\u2063\u200d"]:
                refused = await session.call_tool("memwal_recall", {"query": query, "limit": 5})
                assert refused.is_error and "query has nothing visible" in tool_text(refused), tool_text(refused)
            for query in ["?!...", "☕"]:
                text, hits = await recall(session, query, limit=5)
                assert hits == [], (query, hits)
                assert "no word or number to search for" in text, text


async def test_min_relevance_is_a_setting(server_env, tmp_path: Path) -> None:
    """A stricter floor keeps only word matches and strong meaning matches; 0 lets anything back-fill."""
    facts = [COFFEE, *RELATED, *UNRELATED]
    for floor, expected in (("0.5", {COFFEE, *RELATED[:2]}), ("0", set(facts))):
        env = server_env(MEMWAL_RECALL__MIN_RELEVANCE=floor)
        with anyio.fail_after(120):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                if floor == "0.5":
                    await wait_done(session, [await remember(session, text) for text in facts])
                text, hits = await recall(session, "coffee", limit=10)
        assert {hit["text"] for hit in hits} == expected, (floor, text)


async def test_forget_by_query_erases_only_relevant_memories(server_env, tmp_path: Path) -> None:
    env = server_env()
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            await wait_done(session, [await remember(session, text) for text in [COFFEE, *RELATED, *UNRELATED]])

    query = ["forget", "--query", "coffee machine", "--limit", "10"]
    dry = cli(env, *query, "--dry-run", cwd=tmp_path)
    lines = dry.stdout.splitlines()
    assert lines[0] == "would forget:", dry.stdout
    assert any(line.endswith("Coffee machine in the office is broken") for line in lines), dry.stdout
    assert not any(fact in dry.stdout for fact in UNRELATED), dry.stdout
    would = json.loads(cli(env, *query, "--dry-run", "--json", cwd=tmp_path).stdout)["would_forget"]
    assert [(item["id"], item["text"]) for item in would] == [
        (line.split(" ", 1)[0], line.split("] ", 1)[1]) for line in lines[1:]
    ]

    erased = json.loads(cli(env, *query, "--yes", "--json", cwd=tmp_path).stdout)
    assert [outcome["memory_id"] for outcome in erased] == [item["id"] for item in would]  # what it said, no more

    with anyio.fail_after(60):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            left = await session.call_tool("memwal_list", {"limit": 100})
    texts = {memory["text"] for memory in left.structured_content["memories"]}
    assert set(UNRELATED) <= texts  # Alice's birthday among them
    assert "Coffee machine in the office is broken" not in texts


# --- D12 / D13: copies count what is stored, and say how it was folded ------------------


async def test_copies_count_everything_stored_whatever_the_limit(server_env, tmp_path: Path) -> None:
    variants = [("  " * (i % 3)) + (COFFEE.upper() if i % 2 else COFFEE.lower()) + (" " * (i % 5)) for i in range(300)]
    env = server_env(MEMWAL_CURATION__ENABLED="false")
    with anyio.fail_after(240):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            job_ids = [await remember(session, text) for text in variants]
            job_ids.append(await remember(session, "Bob likes his coffee black"))
            await wait_done(session, job_ids)
            for limit in (1, 2, 5, 20):
                text, hits = await recall(session, "dark roast coffee", limit=limit)
                assert hits[0]["copies"] == 299, (limit, hits[0])
                assert hits[0]["folded_by_llm"] == 0
                assert "(299 duplicate copies of the above collapsed;" in text, text
            # Copies in namespaces outside the search are not counted; inside it they are.
            await wait_done(session, [await remember(session, COFFEE, namespace="other")])
            _, here = await recall(session, "dark roast coffee", limit=1)
            _, everywhere = await recall(session, "dark roast coffee", limit=1, namespace="*")
    assert here[0]["copies"] == 299
    assert everywhere[0]["copies"] == 300


async def test_a_fact_folded_by_the_llm_is_not_called_the_same_fact(server_env, tmp_path: Path) -> None:
    def script(request: dict[str, Any]) -> Reply:
        return Reply("SKIP C1")

    with ScriptedLLM(script) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(120):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                await wait_done(session, [await remember(session, COFFEE)])
                jobs = await wait_done(session, [await remember(session, "The user prefers dark roast coffee.")])
                assert jobs[0]["decision"] == "skipped", jobs
                text, hits = await recall(session, "dark roast coffee", limit=3)
                assert hits[0]["text"] == COFFEE
                assert (hits[0]["copies"], hits[0]["folded_by_llm"]) == (1, 1)
                lines = text.splitlines()
                assert lines[1] == "(1 similar fact folded into the above by the curation model.)", text
                assert "duplicate" not in text and "the same fact" not in text, text

                # An exact repeat is the same fact, and is said to be, beside the folded one.
                jobs = await wait_done(session, [await remember(session, "  user prefers DARK roast coffee")])
                assert jobs[0]["decision"] == "occurrence", jobs
                text, hits = await recall(session, "dark roast coffee", limit=3)
    assert (hits[0]["copies"], hits[0]["folded_by_llm"]) == (2, 1)
    lines = text.splitlines()
    assert lines[1:3] == [
        "(1 duplicate copy of the above collapsed; the same fact is stored more than once.)",
        "(1 similar fact folded into the above by the curation model.)",
    ], text


# --- D10 / D11: time windows see each occurrence's date; 1970 is a date --------------------


async def test_time_windows_see_the_dates_of_occurrences(server_env, tmp_path: Path) -> None:
    bill = "Paid the electricity bill"
    env = server_env()
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            first = await wait_done(session, [await remember(session, bill, occurred_at="2026-01-15")])
            again = await wait_done(session, [await remember(session, bill, occurred_at="2026-11-15")])
            assert again[0]["decision"] == "occurrence" and again[0]["memory_id"] == first[0]["memory_id"]

            text, november = await recall(session, "electricity bill", since="2026-11-01")
            assert [hit["text"] for hit in november] == [bill], text
            assert november[0]["copies"] == 0
            assert "[2026-11-15]" in text, text

            _, january = await recall(session, "electricity bill", until="2026-02-01")
            assert [(hit["text"], hit["copies"]) for hit in january] == [(bill, 0)]

            _, both = await recall(session, "electricity bill", since="2026-01-01", until="2026-12-31")
            assert both[0]["copies"] == 1
            _, neither = await recall(session, "electricity bill", since="2026-03-01", until="2026-10-31")
            assert neither == []

    listed = json.loads(cli(env, "list", "--since", "2026-11-01", "--json", cwd=tmp_path).stdout)
    assert [memory["text"] for memory in listed["memories"]] == [bill]
    assert json.loads(cli(env, "list", "--since", "2026-12-01", "--json", cwd=tmp_path).stdout)["memories"] == []


async def test_the_first_second_of_1970_is_a_date(server_env, tmp_path: Path) -> None:
    env = server_env()
    fact = "The first Unix timestamp marks the epoch"
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            await wait_done(session, [await remember(session, fact, occurred_at="1970-01-01T00:00:00Z")])
            text, early = await recall(session, "unix epoch timestamp", until="1970-01-02")
            assert [hit["text"] for hit in early] == [fact], text
            assert early[0]["occurred_at"] == "1970-01-01T00:00:00+00:00"
            assert "[1970-01-01]" in text, text
            _, late = await recall(session, "unix epoch timestamp", since="2000-01-01")
            assert late == []
            listed = await session.call_tool("memwal_list", {})
    assert listed.structured_content["memories"][0]["occurred_at"] == "1970-01-01T00:00:00+00:00"
    assert "[1970-01-01]" in tool_text(listed)
    assert json.loads(cli(env, "list", "--since", "2000-01-01", "--json", cwd=tmp_path).stdout)["memories"] == []


# --- D9 / D18: read-your-writes across namespaces with a backlog; pending scores are exact ---


async def test_read_your_writes_across_namespaces_behind_a_backlog(server_env, tmp_path: Path) -> None:
    """No worker anywhere, so everything stays queued: 50 long facts in `bulk`, one in
    `notes`, then 1,000 more long ones in `bulk`. A recall over every namespace must see the
    `notes` fact and a fact deep in the `bulk` backlog, each with what matches it."""
    filler = " ".join(
        f"Section {{n}} of the quarterly report covers item {i} of the warehouse inventory." for i in range(12)
    )
    note = "The locksmith is coming on Thursday to replace the front door lock"
    deep = "The pallet of spare turbine gaskets was moved to aisle Q-17"
    env = server_env(MEMWAL_RECALL__READ_YOUR_WRITES_WAIT_MS="300")
    with anyio.fail_after(300):
        async with mcp_stdio_session(env, tmp_path / "stderr.log", args=["serve", "--no-worker"]) as (session, _):
            for n in range(50):
                await remember(session, (deep + ". " if n == 10 else "") + filler.format(n=n), namespace="bulk")
            await remember(session, note, namespace="notes")
            for n in range(50, 1050):
                await remember(session, filler.format(n=n), namespace="bulk")

            text, hits = await recall(session, "when does the locksmith come", namespace="*", limit=3)
            assert hits and hits[0]["text"] == note and hits[0]["pending"], text
            text, hits = await recall(session, "turbine gaskets", namespace="*", limit=3)
            assert hits and hits[0]["text"].startswith(deep) and hits[0]["namespace"] == "bulk", text


async def test_a_queued_fact_scores_what_its_memory_will(server_env, tmp_path: Path) -> None:
    env = server_env()
    new = "The espresso machine on floor 3 needs descaling every Friday"
    queries = ["espresso machine descaling", "coffee machine", "what happens on Fridays"]
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            await wait_done(session, [await remember(session, text) for text in [COFFEE, *RELATED, *UNRELATED]])
        pending: dict[str, float] = {}
        waiting_env = {**env, "MEMWAL_RECALL__READ_YOUR_WRITES_WAIT_MS": "0"}
        async with mcp_stdio_session(waiting_env, tmp_path / "stderr.log", args=["serve", "--no-worker"]) as (
            session,
            _,
        ):
            job = await remember(session, new)
            for query in queries:
                _, hits = await recall(session, query, limit=10)
                mine = [hit for hit in hits if hit["text"] == new]
                assert mine and mine[0]["pending"], (query, hits)
                pending[query] = mine[0]["score"]
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            await wait_done(session, [job])
            for query in queries:
                _, hits = await recall(session, query, limit=10)
                mine = [hit for hit in hits if hit["text"] == new]
                assert mine and not mine[0]["pending"], (query, hits)
                assert abs(mine[0]["score"] - pending[query]) <= 1e-4, (query, mine[0]["score"], pending[query])
