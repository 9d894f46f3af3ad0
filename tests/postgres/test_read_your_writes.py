"""Read-your-writes across replicas: what a call on replica A returned is what replica B answers from next.

Two `memwal-mcp serve` processes on one PostgreSQL database, the real `mcp` client holding a session on each.
A fact remembered on A (no wait: its job is still queued when the call returns) is found by a recall on B
that starts after; a memory forgotten on A is gone from B's next recall.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.conftest import CALL_TIMEOUT_S, base_env, tool_text
from tests.e2e.http_helpers import make_token, serve

pytestmark = pytest.mark.slow

FACTS = [
    "The incident bridge number is +1 555 0100",
    "Release freeze starts on the 18th",
    "The payments service owner is Ines",
    "Grafana lives at grafana.ops.internal",
    "Deploys need two approvals after 16:00",
    "The on-call phone charger is in drawer 3",
]


async def _open(stack: AsyncExitStack, url: str, token: str) -> ClientSession:
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT_S)
    )
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S))
    await session.initialize()
    return session


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, tool_text(result)
    assert result.structured_content is not None
    return result.structured_content


async def _scenario(a_url: str, b_url: str, token: str) -> None:
    with anyio.fail_after(180):
        async with AsyncExitStack() as stack:
            on_a, on_b = await _open(stack, a_url, token), await _open(stack, b_url, token)
            ids = {}
            for fact in FACTS:
                filed = await _call(on_a, "memwal_remember", {"text": fact})
                found = await _call(on_b, "memwal_recall", {"query": fact, "limit": 3})
                assert fact in [hit["text"] for hit in found["hits"]], (filed, found)
                ids[fact] = filed["job_id"]
            # Every job done, then forget one fact on A: B's next recall no longer has it.
            status = await _call(on_b, "memwal_remember_status", {"job_ids": list(ids.values()), "wait_ms": 20000})
            memory = {job["job_id"]: job["memory_id"] for job in status["jobs"]}
            gone = FACTS[2]
            await _call(on_a, "memwal_forget", {"memory_id": memory[ids[gone]]})
            found = await _call(on_b, "memwal_recall", {"query": gone, "limit": 3})
            assert gone not in [hit["text"] for hit in found["hits"]], found


def test_a_recall_on_one_replica_sees_what_another_just_acknowledged(pg_url: str, tmp_path: Path) -> None:
    env = base_env(tmp_path, tmp_path / "unused.db", MEMWAL_DB_URL=pg_url)
    token = make_token(env, "alice")
    with serve(env, tmp_path, name="a") as a, serve(env, tmp_path, name="b") as b:
        anyio.run(_scenario, a.mcp, b.mcp, token)
        for served in (a, b):
            assert "Traceback" not in served.log_text(), served.log_text()[-3000:]
