"""What the LLM sends is untrusted: a malformed reply or a forbidden merged body never stalls
curation, loses the proposal or stores text a remember would refuse.

The real `memwal-mcp` over stdio with the real MCP client, on a SQLite file and on PostgreSQL;
the LLM is the scripted OpenAI-compatible server on 127.0.0.1, talked to by the real `openai` client.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import anyio
import pytest

from memwal_mcp.curation.merge_guard import append_body
from tests.databases import Database
from tests.e2e.conftest import mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

BASE = "The API timeout is 30 s on staging"
PROPOSAL = "The API timeout on staging is now 42 s"


def _completion(content: Any) -> str:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})


# Each is one reply to one proposal: a chat completion whose `content` is not text, or no
# completion at all.
MALFORMED = [
    _completion(5),
    '{"choices": [{"message": {"role": "assistant", "content": NaN}}]}',
    _completion(["UPDATE C1", "---", "merged"]),
    _completion({"text": "UPDATE C1"}),
    _completion(None),
    '{"id": "x", "object": "chat.completion"}',
    '{"choices": []}',
    '{"choices": [{"message": 7}]}',
    "[1, 2]",
]


async def _remember(session: Any, text: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool("memwal_remember", {"text": text, "wait_ms": 20000, **arguments})
    assert not result.is_error, tool_text(result)
    return dict(result.structured_content)


async def _recall(session: Any, query: str, **arguments: Any) -> list[str]:
    result = await session.call_tool("memwal_recall", {"query": query, **arguments})
    assert not result.is_error, tool_text(result)
    return [hit["text"] for hit in result.structured_content["hits"]]


def _counter(db: Database, marker: str) -> int:
    rows = db.rows("SELECT count FROM curation_counters WHERE marker = ?", (marker,))
    return rows[0][0] if rows else 0


async def test_a_reply_that_is_not_text_is_no_decision_and_the_proposal_is_created(server_env, db: Database, tmp_path):
    replies = iter(MALFORMED)
    with ScriptedLLM(lambda request: Reply(raw_body=next(replies, "CREATE"))) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(240):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                outcomes = []
                for number, raw in enumerate(MALFORMED):
                    namespace = f"n{number}"  # one lane each: every proposal meets one nominee
                    first = await _remember(session, BASE, namespace=namespace)
                    assert first["decision"] == "created", first
                    outcomes.append(await _remember(session, PROPOSAL, namespace=namespace))
                    assert len(llm.requests) == number + 1, (raw, len(llm.requests))  # asked once, not again
                unrelated = await _remember(session, "The office plant is a ficus", namespace="n0")
                found = await _recall(session, "API timeout on staging 42 s", namespace="n0")
    assert [(o["status"], o["decision"]) for o in outcomes] == [("done", "created")] * len(MALFORMED), outcomes
    assert unrelated["decision"] == "created"
    assert PROPOSAL in found
    assert _counter(db, "curation_nominee_no_llm_decision") == len(MALFORMED)
    assert len(llm.requests) == len(MALFORMED)


# Merged bodies a remember would refuse; the guard alone would pass each (every word is kept).
FORBIDDEN_BODIES = [
    _completion(f"UPDATE C1\n---\n{PROPOSAL} (previously 30 s) \ud800"),  # a lone surrogate
    _completion(f"UPDATE C1\n---\n{BASE}\u0000 {PROPOSAL}\u001b[31m"),  # NUL and an escape sequence
    _completion(f"UPDATE C1\n---\n{BASE}; {PROPOSAL} " + "padding " * 9000),  # over max_text_bytes
]


async def test_a_merged_body_a_remember_would_refuse_is_no_body_and_the_proposal_is_appended(
    server_env, db: Database, tmp_path
):
    replies = iter(FORBIDDEN_BODIES)
    with ScriptedLLM(lambda request: Reply(raw_body=next(replies, "CREATE"))) as llm:
        env = server_env(
            MEMWAL_LLM__BASE_URL=llm.base_url,
            MEMWAL_LLM__MODEL="scripted",
            MEMWAL_LLM__TIMEOUT_S="5",
            MEMWAL_LIMITS__MAX_TEXT_BYTES="32768",
        )
        with anyio.fail_after(240):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                outcomes, found = [], []
                for number in range(len(FORBIDDEN_BODIES)):
                    namespace = f"n{number}"
                    await _remember(session, BASE, namespace=namespace)
                    outcomes.append(await _remember(session, PROPOSAL, namespace=namespace))
                    found.append(await _recall(session, "API timeout on staging now 42 s", namespace=namespace))
    appended = append_body(BASE, PROPOSAL, date.today())
    assert [(o["status"], o["decision"]) for o in outcomes] == [("done", "appended")] * 3, outcomes
    assert all(hits[:1] == [appended] for hits in found), found
    bodies = [body for (body,) in db.rows("SELECT body FROM memories WHERE status = 'live'")]
    assert sorted(bodies) == [appended] * 3
    assert len(llm.requests) == 3


async def test_an_append_over_the_size_limit_creates_the_proposal_instead(server_env, db: Database, tmp_path):
    limit = len(BASE) + len(PROPOSAL) + 8  # each text fits; the dated append of one to the other does not
    with ScriptedLLM(lambda request: Reply(f"UPDATE C1\n---\n{BASE}; {PROPOSAL} \x1b[2J")) as llm:
        env = server_env(
            MEMWAL_LLM__BASE_URL=llm.base_url,
            MEMWAL_LLM__MODEL="scripted",
            MEMWAL_LLM__TIMEOUT_S="5",
            MEMWAL_LIMITS__MAX_TEXT_BYTES=str(limit),
        )
        with anyio.fail_after(120):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                await _remember(session, BASE)
                outcome = await _remember(session, PROPOSAL)
                found = await _recall(session, "API timeout on staging now 42 s")
    assert (outcome["status"], outcome["decision"]) == ("done", "created"), outcome
    assert found[0] == PROPOSAL
    live = db.rows("SELECT body FROM memories WHERE status = 'live' ORDER BY created_at, id")
    assert [body for (body,) in live] == [BASE, PROPOSAL]
    assert len(llm.requests) == 1


# --- undo of a merge keeps the proposal remembered ----------------------------------------

MERGED = "The API timeout on staging is now 42 s (previously 30 s)"


def _cli(env: dict[str, str], *args: str) -> str:
    import subprocess

    from tests.e2e.conftest import MEMWAL

    done = subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _live(db: Database) -> list[str]:
    return sorted(body for (body,) in db.rows("SELECT body FROM memories WHERE status = 'live'"))


async def test_undo_of_an_update_brings_the_proposal_back_as_its_own_memory(server_env, db: Database, tmp_path):
    replies = iter([Reply(f"UPDATE C1\n---\n{MERGED}")])
    with ScriptedLLM(lambda request: next(replies, Reply("CREATE"))) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(120):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                first = await _remember(session, BASE)
                second = await _remember(session, PROPOSAL)
        assert second["decision"] == "updated" and second["memory_id"] == first["memory_id"], second
        target = first["memory_id"]

        _cli(env, "undo", target)
        assert _live(db) == sorted([BASE, PROPOSAL])
        [(decision, split)] = db.rows("SELECT decision, memory_id FROM remember_jobs WHERE id = ?", (second["job_id"],))
        assert decision == "created" and split != target
        assert db.rows("SELECT body, vector_model FROM memories WHERE id = ?", (split,)) == [(PROPOSAL, None)]
        _cli(env, "check")

        _cli(env, "undo", target)  # undoing the undo folds the proposal in again
        assert _live(db) == [MERGED]
        _cli(env, "check")
        _cli(env, "undo", target)
        assert _live(db) == sorted([BASE, PROPOSAL])
        _cli(env, "check")

        with anyio.fail_after(120):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                found = await _recall(session, "API timeout on staging now 42 s")
                status = await session.call_tool("memwal_remember_status", {"job_ids": [second["job_id"]]})
        assert found[0] == PROPOSAL, found
        assert status.structured_content["jobs"][0]["memory_id"] == split
