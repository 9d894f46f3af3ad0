"""/healthz, as a load balancer uses it: no token, 200 while the store answers, 503 once it does not."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from .http_helpers import bearer, make_token, open_session, reply_of, serve, tool_call

pytestmark = pytest.mark.slow


def test_healthz_answers_without_a_token_while_the_mcp_endpoint_still_needs_one(server_env, tmp_path: Path) -> None:
    env = server_env()
    token = make_token(env, "alice")
    with serve(env, tmp_path) as served:
        health = httpx2.get(served.base + "/healthz", timeout=10)
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}
        assert health.headers["cache-control"] == "no-store"
        assert httpx2.head(served.base + "/healthz", timeout=10).status_code == 200
        assert httpx2.post(served.base + "/healthz", timeout=10).status_code == 405
        # The probe is no way around the tokens: the MCP endpoint still refuses a caller without one.
        assert httpx2.post(served.base + "/mcp", json={}, timeout=10).status_code == 401
        assert httpx2.get(served.base + "/healthz", headers=bearer(token), timeout=10).status_code == 200


def test_healthz_says_503_while_the_database_is_down_and_200_once_it_is_back(server_env, tmp_path: Path) -> None:
    """A replica whose PostgreSQL is unreachable must leave the balancer's rotation, and come back by itself."""
    import pgserver

    folder = Path(tempfile.mkdtemp(prefix="memwal-healthz-pg-"))
    postgres = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        url = postgres.get_uri()
        env = server_env(MEMWAL_DB_URL=url)
        with serve(env, tmp_path) as served:
            assert httpx2.get(served.base + "/healthz", timeout=10).status_code == 200
            postgres.cleanup()  # pg_ctl stop: the database goes away under the running replica
            answered = httpx2.get(served.base + "/healthz", timeout=20)
            assert answered.status_code == 503
            assert answered.json() == {"status": "unavailable", "reason": "the store did not answer a read"}
            postgres = pgserver.get_server(folder, cleanup_mode="stop")
            assert postgres.get_uri() == url  # the same socket: the replica's URL reaches it again
            deadline = time.monotonic() + 30
            while (status := httpx2.get(served.base + "/healthz", timeout=20).status_code) != 200:
                assert time.monotonic() < deadline, f"still {status} 30 s after the database came back"
                time.sleep(0.5)
            assert "health check failed" in served.log_text()
    finally:
        postgres.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


async def test_a_database_that_falls_silent_is_503_on_time_and_a_lost_one_a_one_line_error(
    server_env, tmp_path: Path
) -> None:
    """PostgreSQL cut off without a reset (a partition): /healthz must still answer 503 within its
    bound, every time it is asked, and 200 once the network is back (it hung for minutes: its read
    waited on the silent connection). Then the database gone for good: a tool call says so in one
    line naming PostgreSQL (it waited a minute for a plain-text 500, or said only "Error executing
    tool memwal_recall")."""
    from tests.postgres.blackhole import Blackhole
    from tests.postgres.server import shared

    postgres = shared()
    url = postgres.take()
    try:
        with Blackhole(url) as hole:
            env = server_env(MEMWAL_DB_URL=hole.url)
            token = make_token(env, "alice")
            with serve(env, tmp_path) as served:
                async with httpx2.AsyncClient(timeout=60) as client:
                    health = served.base + "/healthz"
                    assert (await client.get(health)).status_code == 200
                    session_id = await open_session(client, served.mcp, token)

                    hole.silent()
                    for _ in range(3):  # the first read still hangs in its thread while the others are asked
                        answered = await client.get(health, timeout=30)
                        assert answered.status_code == 503, answered.text
                    hole.speak()
                    deadline = time.monotonic() + 30
                    while (status := (await client.get(health, timeout=30)).status_code) != 200:
                        assert time.monotonic() < deadline, f"still {status} 30 s after the network came back"
                        await anyio.sleep(0.5)

                    hole.close()  # every connection dropped, no new one accepted
                    response = await tool_call(
                        client, served.mcp, session_id, "memwal_recall", {"query": "anything"}, token
                    )
                    if response.status_code == 503:  # refused at the gate: the token could not be read
                        message = response.json()["error"]["message"]
                    else:
                        result = reply_of(response)["result"]
                        assert result["isError"] is True, result
                        message = result["content"][0]["text"]
                    assert message.startswith("PostgreSQL at ") and message.endswith("try again"), message
                    assert "\n" not in message
                log = served.log_text()
                assert "Exception in ASGI application" not in log and "Traceback" not in log, log[-3000:]
    finally:
        postgres.give_back(url)
