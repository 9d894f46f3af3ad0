"""What one caller can hold and spend on a shared HTTP server: sessions per token, idle sessions, the rate limit.

Real `memwal-mcp serve` subprocesses on 127.0.0.1, tokens from the real CLI, raw HTTP requests (status codes,
headers and session ids are what is checked) and the MCP client where it is the thing a user runs.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPError

from .conftest import CALL_TIMEOUT_S, tool_text
from .http_helpers import (
    INITIALIZE,
    bearer,
    initialize,
    make_token,
    open_session,
    ping,
    rpc,
    serve,
    sse_stream,
    tool_call,
)

pytestmark = pytest.mark.slow

UNLIMITED = {"MEMWAL_AUTH__BURST": "100000", "MEMWAL_AUTH__RATE_PER_MINUTE": "1000000"}


async def _initialize_many(client: httpx2.AsyncClient, url: str, token: str | None, count: int) -> list[str]:
    session_ids = []
    for _ in range(count):
        opened = await initialize(client, url, token)
        assert opened.status_code == 200, (opened.status_code, opened.text)
        session_ids.append(opened.headers["mcp-session-id"])
    return session_ids


async def _alive(client: httpx2.AsyncClient, url: str, session_ids: list[str], token: str | None) -> list[bool]:
    alive = []
    for session_id in session_ids:
        status = (await ping(client, url, session_id, token)).status_code
        assert status in (200, 404), status
        alive.append(status == 200)
    return alive


async def test_a_token_keeps_at_most_its_cap_of_sessions(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__MAX_SESSIONS_PER_TOKEN="3", **UNLIMITED)
    alice, bob = make_token(env, "alice"), make_token(env, "bob")
    with serve(env, tmp_path) as served, anyio.fail_after(120):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            bobs = await open_session(client, served.mcp, bob)
            alices = await _initialize_many(client, served.mcp, alice, 200)
            # The oldest sessions were ended as new ones opened: only the newest 3 still answer.
            assert await _alive(client, served.mcp, alices, alice) == [False] * 197 + [True] * 3
            # Another token's sessions are its own: alice's initialize calls did not end bob's.
            assert (await ping(client, served.mcp, bobs, bob)).status_code == 200
            assert (await ping(client, served.mcp, alices[-1], bob)).status_code == 404
            # A live session still does its work.
            done = await tool_call(client, served.mcp, alices[-1], "memwal_recall", {"query": "anything"}, alice)
            assert done.status_code == 200
    assert "Traceback" not in served.log_text(), served.log_text()[-4000:]


async def test_without_tokens_the_server_keeps_at_most_the_cap_of_sessions(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__MAX_SESSIONS_PER_TOKEN="3")
    with serve(env, tmp_path) as served, anyio.fail_after(120):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            opened = await _initialize_many(client, served.mcp, None, 100)
            assert await _alive(client, served.mcp, opened, None) == [False] * 97 + [True] * 3


async def test_initialize_spends_the_rate_limit_too(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__BURST="5", MEMWAL_AUTH__RATE_PER_MINUTE="1")
    token = make_token(env, "alice")
    with serve(env, tmp_path) as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            answers = [await initialize(client, served.mcp, token) for _ in range(10)]
            refused = await initialize(client, served.mcp, token)
            # Ending a session is never refused: it frees the server.
            ended = await client.delete(
                served.mcp, headers={**bearer(token), "mcp-session-id": answers[0].headers["mcp-session-id"]}
            )
    assert [answer.status_code for answer in answers] == [200] * 5 + [429] * 5
    assert ended.status_code == 200
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "retry after" in refused.json()["error"]["message"]


async def test_an_idle_session_is_closed(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_SERVER__SESSION_IDLE_S="0.5")
    with serve(env, tmp_path) as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            session_id = await open_session(client, served.mcp)
            # Each ping is a request, so the session is idle only in the pauses between them (longer than 0.5 s).
            while (await ping(client, served.mcp, session_id)).status_code == 200:
                await anyio.sleep(2)
            assert (await ping(client, served.mcp, session_id)).status_code == 404
            assert (await open_session(client, served.mcp)) != session_id


# --- SSE ---------------------------------------------------------------------------------


async def test_sse_streams_of_one_token_are_capped(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__MAX_SESSIONS_PER_TOKEN="2", **UNLIMITED)
    token = make_token(env, "alice")
    with serve(env, tmp_path, transport="sse") as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            async with (
                sse_stream(client, served.base, token) as first,
                sse_stream(client, served.base, token) as second,
                sse_stream(client, served.base, token) as third,
                sse_stream(client, served.base, token) as fourth,
            ):
                assert await first.next_event() is None, "the oldest stream is ended"
                assert await second.next_event() is None
                for live in (third, fourth):
                    posted = await client.post(live.messages_url, json=INITIALIZE, headers=bearer(token))
                    assert posted.status_code == 202
                    assert "result" in await live.next_message()


async def test_an_idle_sse_stream_is_closed(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_SERVER__SESSION_IDLE_S="0.5")
    with serve(env, tmp_path, transport="sse") as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client, sse_stream(client, served.base) as stream:
            assert await stream.next_event() is None
    assert "Traceback" not in served.log_text(), served.log_text()[-4000:]


async def test_sse_over_the_rate_gets_429_and_the_error_on_the_stream(server_env, tmp_path: Path) -> None:
    # The GET and three messages fit in the burst; the fifth request does not.
    env = server_env(MEMWAL_AUTH__BURST="4", MEMWAL_AUTH__RATE_PER_MINUTE="1")
    token = make_token(env, "alice")
    with serve(env, tmp_path, transport="sse") as served, anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client,
            sse_stream(client, served.base, token) as stream,
        ):
            post = stream.messages_url
            assert (await client.post(post, json=INITIALIZE, headers=bearer(token))).status_code == 202
            assert "result" in await stream.next_message()
            assert (
                await client.post(post, json=rpc("notifications/initialized", id=None), headers=bearer(token))
            ).status_code == 202
            call = rpc("tools/call", {"name": "memwal_recall", "arguments": {"query": "anything"}}, id=7)
            assert (await client.post(post, json=call, headers=bearer(token))).status_code == 202
            assert (await stream.next_message())["id"] == 7

            refused = await client.post(post, json={**call, "id": 8}, headers=bearer(token))
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert "retry after" in refused.json()["error"]["message"]
            on_stream = await stream.next_message()
            assert on_stream["id"] == 8 and "retry after" in on_stream["error"]["message"]
            assert on_stream["error"]["data"]["retry_after_s"] == int(refused.headers["retry-after"])


async def test_the_mcp_sse_client_gets_the_rate_limit_error(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__BURST="6", MEMWAL_AUTH__RATE_PER_MINUTE="1")
    token = make_token(env, "alice")
    with serve(env, tmp_path, transport="sse") as served, anyio.fail_after(60):
        with pytest.raises(BaseException) as raised:  # the SDK's SSE client stops posting after a non-2xx answer
            async with sse_client(served.base + "/sse", headers=bearer(token), timeout=10, sse_read_timeout=60) as (
                read,
                write,
            ):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                    await session.initialize()
                    for _ in range(10):
                        result = await session.call_tool("memwal_recall", {"query": "anything"})
                        assert not result.is_error, tool_text(result)
        refusals = [e for e in _leaves(raised.value) if isinstance(e, MCPError)]
        assert refusals and "retry after" in refusals[0].message, raised.value


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    grouped = getattr(error, "exceptions", None)
    if isinstance(grouped, tuple):
        return [leaf for inner in grouped for leaf in _leaves(inner)]
    return [error]
