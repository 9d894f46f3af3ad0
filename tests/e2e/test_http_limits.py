"""What one caller can spend on a shared HTTP server: the rate limit, on every request.

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
    rpc,
    serve,
    sse_stream,
)


async def test_initialize_spends_the_rate_limit_too(server_env, tmp_path: Path) -> None:
    env = server_env(MEMWAL_AUTH__BURST="5", MEMWAL_AUTH__RATE_PER_MINUTE="1")
    token = make_token(env, "alice")
    with serve(env, tmp_path) as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            statuses = [(await initialize(client, served.mcp, token)).status_code for _ in range(10)]
            refused = await initialize(client, served.mcp, token)
    assert statuses == [200] * 5 + [429] * 5
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "retry after" in refused.json()["error"]["message"]


# --- SSE ---------------------------------------------------------------------------------


async def test_sse_over_the_rate_gets_429_and_the_error_on_the_stream(server_env, tmp_path: Path) -> None:
    # The GET and three messages fit in the burst; the fifth request does not.
    env = server_env(MEMWAL_AUTH__BURST="4", MEMWAL_AUTH__RATE_PER_MINUTE="1")
    token = make_token(env, "alice")
    with serve(env, tmp_path, transport="sse") as served, anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client, sse_stream(client, served.base, token) as stream:
            post = stream.messages_url
            assert (await client.post(post, json=INITIALIZE, headers=bearer(token))).status_code == 202
            assert "result" in await stream.next_message()
            assert (await client.post(post, json=rpc("notifications/initialized", id=None), headers=bearer(token))).status_code == 202
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
            async with sse_client(served.base + "/sse", headers=bearer(token), timeout=10, sse_read_timeout=60) as (read, write):
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
