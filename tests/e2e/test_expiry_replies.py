"""Expiry as replies show it, through the real `mcp` client against `memwal-mcp` over stdio: a
date alone lasts that whole day, a past expiry is accepted but said, every line about a job or
memory with an expiry shows it, and a collapse counts and shows only what the recall could
show (an expired or superseded copy is no copy of a current one unless it was asked for, and
never the one shown in its place; curation is off there, so that every remember is its own
memory and the read side collapses them)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
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


def _today() -> tuple[str, str]:
    """Today and tomorrow in UTC, away from midnight (a date alone must last the whole day)."""
    now = datetime.now(timezone.utc)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), timezone.utc)
    if (midnight - now).total_seconds() < 120:
        time.sleep((midnight - now).total_seconds() + 1)
        now = datetime.now(timezone.utc)
    return now.date().isoformat(), (now.date() + timedelta(days=1)).isoformat()


async def test_a_date_alone_lasts_the_day_and_a_past_expiry_is_said_on_every_line(server_env, tmp_path):
    today, tomorrow = _today()
    with anyio.fail_after(180):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            # "Valid until today": recalled all day, gone from the first instant of tomorrow.
            result = await session.call_tool("memwal_remember", {"text": FACT, "expires_at": today, "wait_ms": 20000})
            until_today = dict(result.structured_content)
            assert (until_today["expires_at"], until_today["expired"]) == (f"{tomorrow}T00:00:00+00:00", False)
            assert tool_text(result).endswith(f"[expires {today}]"), tool_text(result)
            (hit,), text = await _recall(session)
            assert hit["id"] == until_today["memory_id"] and f"[expires {today}] {FACT}" in text
            listed = await session.call_tool("memwal_list", {})
            assert f"[expires {today}] {FACT}" in tool_text(listed)

            # A past expiry is accepted, kept out of recall and list, and the reply says so.
            result = await session.call_tool(
                "memwal_remember", {"text": NEWER, "expires_at": "2020-01-31", "wait_ms": 20000}
            )
            ended = dict(result.structured_content)
            assert not result.is_error and ended["expired"] and ended["status"] == "done"
            line = tool_text(result)
            assert "[expired 2020-01-31]" in line and "already expired" in line and "include_expired" in line
            status = await session.call_tool("memwal_remember_status", {"job_ids": [ended["job_id"]]})
            assert "[expired 2020-01-31]" in tool_text(status) and status.structured_content["jobs"][0]["expired"]
            history = await session.call_tool("memwal_history", {"memory_id": ended["memory_id"]})
            assert tool_text(history).splitlines()[0].startswith(f"{ended['memory_id']} [live] [expired 2020-01-31]")

            many = await session.call_tool(
                "memwal_remember_many",
                {
                    "items": [
                        {"text": "The Qwzxplorf launch is at 10:00", "expires_at": "2999-12-31T10:00:00.5Z"},
                        {"text": "The Qwzxplorf beta ended", "expires_at": "2001-02-03T04:05:06Z"},
                        {"text": "The Qwzxplorf team is five people"},
                    ]
                },
            )
            jobs = many.structured_content["jobs"]
            assert [job["expires_at"] for job in jobs] == [
                "2999-12-31T10:00:00.5+00:00",  # the fraction given, without float noise
                "2001-02-03T04:05:06+00:00",
                None,
            ]
            lines = tool_text(many).splitlines()[1:]
            assert lines[0].endswith("[expires 2999-12-31]") and "recall already sees it" in lines[0]
            assert "[expired 2001-02-03]" in lines[1] and "already expired" in lines[1]
            assert "recall already sees it" not in lines[1]  # it does not: it has expired
            assert "expire" not in lines[2]

            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            described = tools["memwal_remember"].input_schema["properties"]["expires_at"]
            assert "end of that day" in str(described), described


GYM = "The Qwzxplorf gym closes early on Fridays"


async def test_a_repeat_reply_shows_the_expiry_of_the_memory_it_went_into(server_env, tmp_path):
    """A repeat whose own expiry is earlier leaves the memory's later one; its reply showed its own, as if the
    memory now expired sooner."""
    with anyio.fail_after(180):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            first = await _call(session, "memwal_remember", text=GYM, expires_at="2999-12-10", wait_ms=20000)
            result = await session.call_tool(
                "memwal_remember", {"text": GYM, "expires_at": "2999-12-03", "wait_ms": 20000}
            )
            repeat = dict(result.structured_content)
            status = await session.call_tool("memwal_remember_status", {"job_ids": [repeat["job_id"]]})
            history = await _call(session, "memwal_history", memory_id=first["memory_id"])
    memory = first["memory_id"]
    assert repeat["decision"] == "occurrence" and repeat["memory_id"] == memory
    assert (repeat["expires_at"], repeat["memory_expires_at"]) == ("2999-12-04T00:00:00+00:00", first["expires_at"])
    said = (
        f"{repeat['job_id']}: done (occurrence) -> memory {memory} [expires 2999-12-10]"
        " (the memory's later expiry is kept; this fact's own was 2999-12-03)"
    )
    assert tool_text(result) == "Remembered: " + said
    assert tool_text(status) == said
    assert history["expires_at"] == first["expires_at"]
    assert [job["memory_expires_at"] for job in history["jobs"]] == [first["expires_at"]] * 2
