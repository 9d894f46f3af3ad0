"""`memwal-mcp serve` over sse/http as a real subprocess, tokens made by the real CLI, raw MCP-over-HTTP requests.

The raw requests are what any HTTP client sends, so a test can read status codes and headers the MCP client hides.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

from .conftest import CALL_TIMEOUT_S, MEMWAL, PROTOCOL_VERSION, free_port, stop_process, wait_for_port

JSON_AND_SSE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def make_token(env: dict[str, str], owner: str, scope: str = "read,write") -> str:
    """`memwal-mcp token create`, as an administrator would run it next to a running server."""
    token = cli(env, "token", "create", "--owner", owner, "--scope", scope).stdout.strip()
    assert token.startswith("mwk_"), token
    return token


@dataclass
class Served:
    base: str  # http://127.0.0.1:PORT
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def wait_ready(self) -> None:
        wait_for_port(self.port, self.proc, self.log)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def spawn_server(
    env: dict[str, str],
    tmp_path: Path,
    port: int,
    transport: str = "http",
    name: str = "server",
    extra: tuple[str, ...] = (),
) -> Served:
    """`memwal-mcp serve` started, not yet listening (see wait_ready); its stderr in tmp_path/<name>.log."""
    log = tmp_path / f"{name}.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", transport, "--port", str(port), *extra],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    return Served(f"http://127.0.0.1:{port}", proc, log)


@contextlib.contextmanager
def serve(
    env: dict[str, str], tmp_path: Path, transport: str = "http", name: str = "server", extra: tuple[str, ...] = ()
) -> Iterator[Served]:
    served = spawn_server(env, tmp_path, free_port(), transport, name, extra)
    try:
        served.wait_ready()
        yield served
    finally:
        stop_process(served.proc)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def rpc(method: str, params: dict[str, Any] | None = None, id: int | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return message


INITIALIZE = rpc(
    "initialize",
    {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "memwal-e2e", "version": "1"}},
)


def reply_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message in a streamable-HTTP answer, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(d) for d in data if d]
        assert messages, response.text
        return messages[-1]
    return response.json()


async def initialize(client: httpx2.AsyncClient, url: str, token: str | None = None) -> httpx2.Response:
    return await client.post(url, json=INITIALIZE, headers={**JSON_AND_SSE, **bearer(token)})


async def ping(client: httpx2.AsyncClient, url: str, session_id: str, token: str | None = None) -> httpx2.Response:
    headers = {**JSON_AND_SSE, **bearer(token), "mcp-session-id": session_id}
    return await client.post(url, json=rpc("ping", id=2), headers=headers)


async def tool_call(
    client: httpx2.AsyncClient,
    url: str,
    session_id: str,
    name: str,
    arguments: dict[str, Any],
    token: str | None = None,
) -> httpx2.Response:
    headers = {**JSON_AND_SSE, **bearer(token), "mcp-session-id": session_id}
    return await client.post(url, json=rpc("tools/call", {"name": name, "arguments": arguments}, id=3), headers=headers)


async def open_session(client: httpx2.AsyncClient, url: str, token: str | None = None) -> str:
    """initialize + notifications/initialized; returns the session id."""
    opened = await initialize(client, url, token)
    assert opened.status_code == 200, (opened.status_code, opened.text)
    session_id = opened.headers["mcp-session-id"]
    headers = {**JSON_AND_SSE, **bearer(token), "mcp-session-id": session_id}
    done = await client.post(url, json=rpc("notifications/initialized", id=None), headers=headers)
    assert done.status_code == 202, (done.status_code, done.text)
    return session_id


class SseStream:
    """A raw GET /sse: the events as they arrive, and where to post messages."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()
        self.messages_url = ""

    async def next_event(self) -> tuple[str, str] | None:
        """(event, data) of the next event; None when the server ended the stream."""
        event, data = "message", []
        async for line in self._lines:
            if not line:
                if data:
                    return event, "\n".join(data)
                continue
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        return None

    async def next_message(self) -> dict[str, Any]:
        while True:
            got = await self.next_event()
            assert got is not None, "the event stream ended"
            if got[0] == "message":
                return json.loads(got[1])


@contextlib.asynccontextmanager
async def sse_stream(client: httpx2.AsyncClient, base: str, token: str | None = None) -> AsyncIterator[SseStream]:
    async with client.stream(
        "GET", base + "/sse", headers={"Accept": "text/event-stream", **bearer(token)}
    ) as response:
        assert response.status_code == 200, response.status_code
        stream = SseStream(response)
        with anyio.fail_after(CALL_TIMEOUT_S):
            got = await stream.next_event()
        assert got is not None and got[0] == "endpoint", got
        stream.messages_url = base + got[1]
        yield stream
