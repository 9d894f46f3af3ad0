"""What a caller reads when a call goes wrong or counts something, with the real MCP client against
`memwal-mcp` over stdio: one line that says why, in the words of the call (an item's own fields,
not the tool's arguments), never a dump of what was sent, and "1 fact", not "1 facts"."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import call_ok, call_refused, mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

ITEM_FIELDS = "text, namespace, idempotency_key, occurred_at, expires_at, supersedes"


async def test_remember_many_refusals_say_why_in_one_line_and_store_nothing(server_env, db, tmp_path):
    cases: list[tuple[Any, str]] = [
        ([{"text": "A fact", "bogus": 1}], f"items[0].bogus is not a field of an item; the fields are {ITEM_FIELDS}"),
        (
            [{"text": "A fact"}, {"txt": "B fact"}],
            f"items[1].text is required; items[1].txt is not a field of an item; the fields are {ITEM_FIELDS}",
        ),
        ([5], "items[0] must be an object, got 5"),
        ([{"text": "A fact"}, "B fact"], 'items[1] must be an object, got "B fact"'),
        ([{"text": f"Fact number {n}"} for n in range(101)], "items: at most 100 items, got 101"),
        ([], "items is empty; give 1 to 100 facts"),
    ]
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            said = [await call_refused(session, "memwal_remember_many", items=items) for items, _ in cases]
    assert said == [expected for _, expected in cases]
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 0


async def test_counts_read_as_english(server_env, db, tmp_path):
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            many = await session.call_tool(
                "memwal_remember_many", {"items": [{"text": "The printer is on floor 3"}], "wait_ms": 20000}
            )
            memory = many.structured_content["jobs"][0]["memory_id"]
            # A repeat whose own expiry is past goes into a memory that does not expire.
            repeat = await session.call_tool(
                "memwal_remember",
                {"text": "The printer is on floor 3", "expires_at": "2020-01-01", "wait_ms": 20000},
            )
            forgot = await session.call_tool("memwal_forget", {"memory_id": memory})
    assert tool_text(many).splitlines()[0] == "Remembered 1 fact:"
    assert repeat.structured_content["decision"] == "occurrence"
    assert tool_text(repeat).endswith(
        f"-> memory {memory} (the memory does not expire; this fact's own expiry, 2020-01-01, does not shorten it)"
    ), tool_text(repeat)
    disk = forgot.structured_content["disk_copies"]  # PostgreSQL: what stays on its disk; SQLite: none
    assert tool_text(forgot) == f"Forgot {memory} (2 remember jobs erased){f'; {disk}' if disk else ''}."


def _extracting(request: dict[str, Any]) -> bool:
    return request.get("response_format") == {"type": "json_object"}


async def test_analyze_messages_name_the_limit_and_count_in_the_singular(server_env, db, tmp_path):
    replies = iter(
        [
            Reply(json.dumps({"facts": ["Carol leads the data team", 7]})),
            Reply(json.dumps({"facts": [None]})),
        ]
    )

    def script(request: dict[str, Any]) -> Reply:
        return next(replies) if _extracting(request) else Reply("CREATE")

    with ScriptedLLM(script) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(180):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                too_long = await call_refused(session, "memwal_analyze", text="word " * 14000)
                one = await session.call_tool("memwal_analyze", {"text": "Carol: I lead the data team."})
                failed = await call_ok(session, "memwal_analyze", text="Dan: hello.")
    assert too_long == "text is 70000 bytes; the limit is 65536 bytes (analyze it in parts)"
    lines = tool_text(one).splitlines()
    assert lines[0].startswith("Extracted 1 fact from analyze request j_"), lines
    assert lines[-2:] == ["1 fact was refused and not remembered:", "  - fact 2 is a number, not a text"], lines
    assert failed["error"] == "extraction failed: the one fact the LLM returned is no valid text"


async def test_a_server_without_a_worker_says_a_queued_fact_waits_for_one(server_env, db, tmp_path):
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log", args=["serve", "--no-worker"]) as (
            session,
            _,
        ):
            remembered = await session.call_tool("memwal_remember", {"text": "The printer is on floor 3"})
            job = remembered.structured_content["job_id"]
            status = await session.call_tool("memwal_remember_status", {"job_ids": [job]})
    said = f"{job}: queued (no curation worker runs in this server; curated when one runs; recall already sees it)"
    assert tool_text(remembered) == f"Remembered: {said}"
    assert tool_text(status) == said and status.structured_content["jobs"][0]["curated_here"] is False
