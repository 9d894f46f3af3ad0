"""Owners are walls over streamable HTTP: two bearer tokens, one server, random interleavings.

The same driver and model as tests/test_isolation.py (see there for what is checked),
here through the real `memwal-mcp serve --transport http` subprocess on 127.0.0.1 with
tokens made by `memwal-mcp token create`, and the real MCP client, on a SQLite file and on
PostgreSQL. One seeded sequence
runs turn by turn, a second one with both owners' calls in flight at once; the model
carries over, so the second phase also sees everything the first one stored.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.databases import Database

from ..test_isolation import OWNERS, IsolationDriver, Reply, check_rows_stay_with_their_owner, random_ops
from .conftest import CALL_TIMEOUT_S, MEMWAL, free_port, stop_process, tool_text, wait_for_port

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]


def _token(env: dict[str, str], owner: str) -> str:
    made = subprocess.run(
        [str(MEMWAL), "token", "create", "--owner", owner, "--scope", "read,write"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("mwk_"), made.stdout
    return token


@pytest.fixture
def http_server(server_env, tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    # Rate limits out of the way: this test is about walls, not about 429s.
    env = server_env(MEMWAL_AUTH__BURST="100000", MEMWAL_AUTH__RATE_PER_MINUTE="1000000")
    tokens = {owner: _token(env, owner) for owner in OWNERS}
    port = free_port()
    log = tmp_path / "isolation-server.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp", tokens, log
    finally:
        stop_process(proc)


async def _sessions(stack: AsyncExitStack, url: str, tokens: dict[str, str]) -> dict[str, ClientSession]:
    sessions = {}
    for owner, token in tokens.items():
        client = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT_S)
        )
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S))
        await session.initialize()
        sessions[owner] = session
    return sessions


async def test_two_tokens_never_see_each_others_memories(http_server, db: Database) -> None:
    url, tokens, log = http_server
    with anyio.fail_after(100):
        async with AsyncExitStack() as stack:
            sessions = await _sessions(stack, url, tokens)

            async def call(owner: str, tool: str, arguments: dict[str, Any]) -> Reply:
                result = await sessions[owner].call_tool(tool, arguments)
                return Reply(bool(result.is_error), result.structured_content, tool_text(result))

            driver = IsolationDriver(call, db)
            await driver.run(random_ops(random.Random(2024), 150))
            await driver.run_concurrently(random_ops(random.Random(7), 150))

    assert driver.calls > 300
    # Every job in the file is one its owner was handed, and no row links two owners.
    check_rows_stay_with_their_owner(db, {owner: set(m.jobs) for owner, m in driver.models.items()})
    server_log = log.read_text(errors="replace")
    assert "Traceback" not in server_log, server_log[-4000:]
