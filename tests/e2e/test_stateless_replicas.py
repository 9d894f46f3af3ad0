"""Several replicas behind a load balancer that sends each request wherever it likes.

A streamable-HTTP session lives in the process that opened it, so a balancer that spreads one
client's requests over replicas breaks it (the next request's session id is unknown there: 404).
`serve --stateless` keeps no sessions; this drives the real `mcp` client through a real
round-robin HTTP proxy in front of two real `memwal-mcp serve` processes on one database.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from starlette.types import Receive, Scope, Send

from .conftest import CALL_TIMEOUT_S, free_port, tool_text
from .http_helpers import make_token, serve

pytestmark = pytest.mark.slow

_HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"host"}


class RoundRobin:
    """The smallest load balancer: each request to the next backend, answers streamed back as they come."""

    def __init__(self, backends: list[str]) -> None:
        self._next = itertools.cycle(backends)
        self.sent: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        backend = next(self._next)
        self.sent[backend] += 1
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        url = backend + scope["path"] + (("?" + scope["query_string"].decode()) if scope["query_string"] else "")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            request = client.build_request(scope["method"], url, headers=headers, content=body)
            answer = await client.send(request, stream=True)
            try:
                kept = [(k.lower(), v) for k, v in answer.headers.raw if k.lower() not in _HOP_BY_HOP]
                await send({"type": "http.response.start", "status": answer.status_code, "headers": kept})
                async for chunk in answer.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                await answer.aclose()


@contextlib.contextmanager
def balancer(backends: list[str]) -> Iterator[tuple[str, RoundRobin]]:
    app = RoundRobin(backends)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline, "the balancer did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(10)


async def _session_through(url: str, token: str, calls: list[tuple[str, dict]]) -> list[str]:
    with anyio.fail_after(120):
        return await _calls(url, token, calls)


async def _calls(url: str, token: str, calls: list[tuple[str, dict]]) -> list[str]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT_S) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                await session.initialize()
                replies = []
                for name, arguments in calls:
                    result = await session.call_tool(name, arguments)
                    assert not result.is_error, tool_text(result)
                    replies.append(tool_text(result))
                return replies


def test_one_client_spread_over_two_stateless_replicas_works(server_env, tmp_path: Path) -> None:
    env = server_env()
    token = make_token(env, "alice")
    with (
        serve(env, tmp_path, name="a", extra=("--stateless",)) as a,
        serve(env, tmp_path, name="b", extra=("--stateless",)) as b,
        balancer([a.base, b.base]) as (front, spread),
    ):
        calls = [
            ("memwal_remember", {"text": "The staging database moved to db-7.internal", "wait_ms": 5000}),
            ("memwal_remember", {"text": "Standup is at 09:30 on weekdays", "wait_ms": 5000}),
            ("memwal_recall", {"query": "where is the staging database?", "limit": 1}),
            ("memwal_recall", {"query": "when is standup?", "limit": 1}),
        ]
        replies = anyio.run(_session_through, front + "/mcp", token, calls)
        assert "db-7.internal" in replies[2]
        assert "09:30" in replies[3]
        # Every call of the one session went through the balancer, and both replicas answered some.
        assert spread.sent[a.base] >= 2 and spread.sent[b.base] >= 2, spread.sent
        for served in (a, b):
            assert "Traceback" not in served.log_text(), served.log_text()[-3000:]


def test_a_get_on_a_stateless_server_is_refused_not_held_open(server_env, tmp_path: Path) -> None:
    """A stateless server has no server-to-client stream: a GET must not open one (it answered 200
    and held the connection until the client gave up)."""
    env = server_env()
    token = make_token(env, "alice")
    with serve(env, tmp_path, extra=("--stateless",)) as served:
        answered = httpx2.get(
            served.mcp, headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}, timeout=20
        )
        assert answered.status_code == 405, (answered.status_code, answered.text)
        assert answered.headers["allow"] == "POST"
        assert answered.json()["error"]["message"].startswith("this server is stateless")


def test_stateless_refuses_sse(server_env) -> None:
    import subprocess

    from .conftest import MEMWAL

    done = subprocess.run(
        [str(MEMWAL), "serve", "--transport", "sse", "--stateless"], env=server_env(), capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "stateless needs transport http" in done.stderr
