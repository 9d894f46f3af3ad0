"""A collapse counts and shows only what the recall could show: an expired or superseded copy of
a fact is no copy of a current one unless it was asked for, and never the one shown in its
place. The real `mcp` client against `memwal-mcp` over stdio, with curation off so that every
remember is its own memory (the read side still collapses them)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.conftest import mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

FACT = "The Qwzxplorf promo code is SAVE10"
NEWER = "The Qwzxplorf promo code is now SAVE20"


async def _call(session: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, tool_text(result)
    return dict(result.structured_content)


async def _recall(session: Any, **arguments: Any) -> tuple[list[dict[str, Any]], str]:
    result = await session.call_tool("memwal_recall", {"query": "Qwzxplorf promo code", "limit": 10, **arguments})
    assert not result.is_error, tool_text(result)
    return [hit for hit in result.structured_content["hits"] if hit["text"] == FACT], tool_text(result)


async def test_expired_copies_are_not_counted_and_never_stand_for_a_current_fact(server_env, tmp_path):
    env = server_env(MEMWAL_CURATION__ENABLED="false")
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            live = await _call(session, "memwal_remember", text=FACT, wait_ms=20000)
            # Stored after it, so on equal scores they rank first (the newer fact).
            ended = [
                await _call(session, "memwal_remember", text=FACT, expires_at=day, wait_ms=20000)
                for day in ("2020-01-31", "2020-02-29")
            ]
            (hit,), text = await _recall(session)
            assert hit["id"] == live["memory_id"]
            assert (hit["copies"], hit["collapsed_ids"]) == (0, [])  # nothing the reply could show
            assert "collapsed" not in text

            (hit,), text = await _recall(session, include_expired=True)
            assert hit["id"] == live["memory_id"] and not hit["expired"] and hit["expires_at"] is None
            assert sorted(hit["collapsed_ids"]) == sorted(job["memory_id"] for job in ended)
            assert hit["copies"] == 2
            line = next(line for line in text.splitlines() if FACT in line)
            assert "[expired" not in line and "[expires" not in line, line


async def test_a_superseded_copy_is_counted_only_when_asked_for_and_never_shown_for_a_live_one(server_env, tmp_path):
    env = server_env(MEMWAL_CURATION__ENABLED="false")
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            # Said again later, the same fact is current once more; its first copy stays superseded.
            # The superseded copy happened later, so on equal scores it ranks first.
            again = await _call(session, "memwal_remember", text=FACT, occurred_at="2026-01-01", wait_ms=20000)
            old = await _call(session, "memwal_remember", text=FACT, occurred_at="2026-06-01", wait_ms=20000)
            newer = await _call(session, "memwal_remember", text=NEWER, supersedes=[old["memory_id"]], wait_ms=20000)
            assert newer["status"] == "done"

            (hit,), _ = await _recall(session)
            assert (hit["id"], hit["copies"], hit["collapsed_ids"]) == (again["memory_id"], 0, [])

            (hit,), text = await _recall(session, include_superseded=True)
            assert hit["id"] == again["memory_id"] and hit["superseded_by"] is None
            assert (hit["copies"], hit["collapsed_ids"]) == (1, [old["memory_id"]])
            line = next(line for line in text.splitlines() if FACT in line)
            assert "[superseded" not in line, line
