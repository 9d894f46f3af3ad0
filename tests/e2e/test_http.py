"""memwal-mcp over streamable HTTP and SSE on 127.0.0.1, with the real MCP client."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from .conftest import CALL_TIMEOUT_S, MEMWAL, db_scalar, free_port, stop_process, tool_text, wait_for_port

pytestmark = pytest.mark.slow

TRANSPORTS: dict[str, tuple[str, Callable[[str], AbstractAsyncContextManager[Any]]]] = {
    "http": ("/mcp", lambda url: streamable_http_client(url)),
    "sse": ("/sse", lambda url: sse_client(url, timeout=10, sse_read_timeout=60)),
}


@pytest.fixture
def http_server(
    request: pytest.FixtureRequest, server_env, tmp_path: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`memwal-mcp serve --transport <t> --port <free>` (default host); yields (url, process)."""
    transport = request.param
    path, _ = TRANSPORTS[transport]
    port = free_port()
    stderr_file = tmp_path / f"{transport}-stderr.log"
    with stderr_file.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", transport, "--port", str(port)],
            env=server_env(),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for_port(port, proc, stderr_file)
        yield f"http://127.0.0.1:{port}{path}", proc
    finally:
        code = stop_process(proc)
    assert code is not None, "the server ignored SIGTERM and had to be killed"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses in LISTEN state on `port`, from /proc/net/tcp{,6} (Linux)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.mark.parametrize("http_server", list(TRANSPORTS), indirect=True)
async def test_remember_recall_round_trip(http_server, db_path: Path, request: pytest.FixtureRequest) -> None:
    url, proc = http_server
    port = int(url.split(":")[-1].split("/")[0])
    if Path("/proc/net/tcp").exists():
        assert _listening_addresses(port) == {"0100007F"}, "should listen on 127.0.0.1 only"
    transport = request.node.callspec.params["http_server"]
    _, connect = TRANSPORTS[transport]
    with anyio.fail_after(60):
        async with connect(url) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                init = await session.initialize()
                assert init.server_info.name == "memwal"
                assert "memwal_recall" in (init.instructions or "")
                names = {tool.name for tool in (await session.list_tools()).tools}
                assert {"memwal_remember", "memwal_remember_status", "memwal_recall"} <= names

                fact = f"The {transport} transport test uses port {port}"
                for _ in range(2):
                    remembered = await session.call_tool("memwal_remember", {"text": fact, "wait_ms": 15000})
                    assert not remembered.is_error, tool_text(remembered)
                    assert remembered.structured_content["status"] == "done"
                other = await session.call_tool(
                    # Related to the query (recall back-fills with relevant facts, not any fact).
                    "memwal_remember",
                    {"text": "Each transport binds to loopback by default", "wait_ms": 15000},
                )
                assert not other.is_error, tool_text(other)

                recalled = await session.call_tool(
                    "memwal_recall", {"query": f"{transport} transport port", "limit": 2}
                )
                assert not recalled.is_error, tool_text(recalled)
                hits = recalled.structured_content["hits"]
                assert [hit["text"] for hit in hits][0] == fact
                assert hits[0]["copies"] == 1
                assert len(hits) == 2
                assert "(1 duplicate copy of the above collapsed" in tool_text(recalled)

                bad = await session.call_tool("memwal_recall", {"query": "x", "limit": 500})
                assert bad.is_error and "limit must be" in tool_text(bad)

    assert proc.poll() is None, "the server should still be serving after the client left"
    assert db_scalar(db_path, "SELECT count(*) FROM remember_jobs") == 3
    assert db_scalar(db_path, "SELECT count(*) FROM memories") == 2
