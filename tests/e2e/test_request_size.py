"""Every call within the tool limits is read, over stdio and HTTP; a request over the transport's limit is
answered for its own id, so the real `mcp` client gets an error instead of waiting until its timeout.

The real client against `memwal-mcp` as a subprocess (stdio), and `memwal-mcp serve` with raw HTTP."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from .conftest import CALL_TIMEOUT_S, db_scalar, mcp_stdio_session
from .http_helpers import open_session, reply_of, serve, tool_call

pytestmark = pytest.mark.slow

TEXT_LIMIT = 65536  # the default max_text_bytes


def _items(count: int, size: int) -> list[dict[str, str]]:
    """Texts of exactly `size` bytes, distinct, half of them newlines and tabs (escaped on the wire, so the
    line is larger than the texts)."""
    return [{"text": (f"fact {i} " + "x\n\t" * size)[:size]} for i in range(count)]


async def test_remember_many_at_the_documented_limits_is_one_call_over_stdio(server_env, tmp_path: Path) -> None:
    db = tmp_path / "memwal.db"
    items = _items(100, TEXT_LIMIT)  # 6.5 MB of text, about 11 MB on the wire: over the SDK's 4 MiB
    with anyio.fail_after(150):
        async with mcp_stdio_session(server_env(MEMWAL_DB_PATH=str(db)), tmp_path / "stderr.log") as (session, _):
            result = await session.call_tool("memwal_remember_many", {"items": items})
            assert not result.is_error, result.content
            jobs = (result.structured_content or {})["jobs"]
            assert len(jobs) == 100 and len({job["job_id"] for job in jobs}) == 100
    assert db_scalar(db, "SELECT count(*) FROM remember_jobs") == 100


async def test_a_line_over_the_limit_is_an_error_for_its_request_not_a_hang(server_env, tmp_path: Path) -> None:
    # Texts of at most 1 KiB put the line limit at its floor, 4 MiB; this text is 5 MiB.
    env = server_env(MEMWAL_DB_PATH=str(tmp_path / "memwal.db"), MEMWAL_LIMITS__MAX_TEXT_BYTES="1024")
    with anyio.fail_after(CALL_TIMEOUT_S - 5):  # well before the client's own timeout
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            with pytest.raises(MCPError) as refused:
                await session.call_tool("memwal_remember", {"text": "y" * (5 << 20)})
            assert refused.value.error.code == -32600
            assert "request line is longer than the limit of 4194304 bytes" in refused.value.error.message
            listed = await session.call_tool("memwal_list", {})  # still serving
            assert not listed.is_error and "No memories" in listed.content[0].text  # type: ignore[union-attr]


async def test_remember_many_over_4_mib_is_served_over_http(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_DB_PATH=str(tmp_path / "memwal.db"))
    with serve(env, tmp_path) as served, anyio.fail_after(150):
        async with httpx2.AsyncClient(timeout=120) as client:
            session_id = await open_session(client, served.mcp)
            items = _items(75, 60_000)  # 4.5 MB of text: the SDK's default body limit answered 413
            answer = await tool_call(client, served.mcp, session_id, "memwal_remember_many", {"items": items})
            assert answer.status_code == 200, (answer.status_code, answer.text[:300])
            reply = reply_of(answer)
            assert reply["result"]["isError"] is False, reply
            assert len(reply["result"]["structuredContent"]["jobs"]) == 75
