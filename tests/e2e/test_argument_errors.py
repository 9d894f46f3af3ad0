"""Bad arguments get the same one-line tool error over stdio and over HTTP, with the real MCP client.

Nothing is coerced (a string or a boolean is not an integer, "yes" is not a boolean), an
argument a tool does not have is refused rather than ignored, the input schemas say so,
and every text argument is held to one character policy. Nothing refused is stored.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .conftest import CALL_TIMEOUT_S, MEMWAL, free_port, mcp_stdio_session, stop_process, tool_text, wait_for_port

pytestmark = pytest.mark.slow

# (tool, arguments, what the error must say)
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("memwal_recall", {"query": "coffee", "limit": "3"}, 'limit must be an integer, got "3"'),
    ("memwal_recall", {"query": "coffee", "limit": True}, "limit must be an integer, got true"),
    ("memwal_recall", {"query": "coffee", "limit": 3.0}, "limit must be an integer, got 3.0"),
    ("memwal_remember", {"text": "A fact", "wait_ms": "100"}, 'wait_ms must be an integer, got "100"'),
    ("memwal_recall", {"query": "coffee", "prefer_recent": "yes"}, 'prefer_recent must be true or false, got "yes"'),
    ("memwal_recall", {"query": "coffee", "prefer_recent": 1}, "prefer_recent must be true or false, got 1"),
    ("memwal_recall", {"query": "coffee", "min_score": "0.5"}, 'min_score must be a number, got "0.5"'),
    ("memwal_remember_status", {"job_ids": '["j_0123456789abcdef"]'}, "job_ids must be a list"),
    ("memwal_list", {"limit": "null"}, 'limit must be an integer, got "null"'),
    # A union (true, false or "only"): one sentence naming every value it takes, not one per branch.
    (
        "memwal_list",
        {"include_expired": "yes"},
        'memwal_list: include_expired must be true, false or "only", got "yes"',
    ),
    ("memwal_list", {"include_superseded": "ONLY"}, 'include_superseded must be true, false or "only", got "ONLY"'),
    ("memwal_list", {"include_superseded": 1}, 'include_superseded must be true, false or "only", got 1'),
    ("memwal_remember", {"text": 5}, "text must be a string, got 5"),
    ("memwal_remember", {"text": "A fact", "wait": 100}, "wait is not an argument of this tool"),
    (
        "memwal_recall",
        {"query": "coffee", "top_k": 3},
        "top_k is not an argument of this tool; the arguments are query",
    ),
    ("memwal_history", {"memory_id": "m_0123456789abcdef", "verbose": True}, "verbose is not an argument"),
    ("memwal_remember", {"text": "a\rb"}, "text contains the control character U+000D at position 1"),
    ("memwal_remember", {"text": "line one\r\nline two"}, "text contains the control character U+000D"),
    ("memwal_remember", {"text": "bell\x07"}, "text contains the control character U+0007"),
    ("memwal_remember", {"text": "del\x7f"}, "text contains the control character U+007F"),
    ("memwal_remember", {"text": "next line\x85"}, "text contains the control character U+0085"),
    ("memwal_remember", {"text": "\u200b\u200b"}, "text has nothing visible in it"),
    ("memwal_remember", {"text": "\u202e"}, "text has nothing visible in it"),
    ("memwal_remember", {"text": "A fact", "idempotency_key": "\u200b"}, "idempotency_key has nothing visible"),
    (
        "memwal_remember",
        {"text": "A fact", "idempotency_key": "k\u2028"},
        "idempotency_key contains the line separator",
    ),
    ("memwal_remember", {"text": "A fact", "namespace": "a\rb"}, "namespace"),
    ("memwal_recall", {"query": "coffee\r"}, "query contains the control character U+000D"),
    ("memwal_recall", {"query": "\u200b"}, "query has nothing visible in it"),
    ("memwal_recall", {"query": "coffee " * 700}, "the limit is 4096 bytes (shorten the query)"),
    ("memwal_history", {"memory_id": ""}, "memory_id is empty; give a memory id such as 'm_0123456789abcdef'"),
    ("memwal_history", {"memory_id": "   "}, "memory_id '   ' is blank (only white space); give a memory id"),
    ("memwal_history", {"memory_id": "\t"}, "memory_id '\\t' is blank (only white space)"),
    ("memwal_history", {"memory_id": " m_0123456789abcdef"}, "has spaces around it; remove them"),
    ("memwal_history", {"memory_id": "j_0123456789abcdef"}, "is a remember job's id, not a memory's"),
    ("memwal_forget", {"memory_id": " "}, "memory_id ' ' is blank (only white space)"),
]


async def _refusals(session: ClientSession) -> None:
    listed = await session.list_tools()
    assert len(listed.tools) >= 6
    for tool in listed.tools:
        assert tool.input_schema.get("additionalProperties") is False, (tool.name, tool.input_schema)
    for tool, arguments, expected in REFUSED:
        result = await session.call_tool(tool, arguments)
        text = tool_text(result)
        assert result.is_error, f"{tool} {arguments!r} was accepted: {text}"
        assert text.startswith(f"Error executing tool {tool}: ") and "\n" not in text, text
        assert expected in text, f"{tool} {arguments!r}: {text}"
        assert "pydantic" not in text and "validation error" not in text, text
    still = await session.call_tool("memwal_remember", {"text": "Tabs\tand\nnewlines\u2028are fine", "wait_ms": 15_000})
    assert not still.is_error and still.structured_content["status"] == "done", tool_text(still)
    memories = (await session.call_tool("memwal_list", {})).structured_content["memories"]
    assert [m["text"] for m in memories] == ["Tabs\tand\nnewlines\u2028are fine"]  # nothing refused was stored


async def test_argument_errors_over_stdio(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await _refusals(session)


@contextlib.asynccontextmanager
async def _http_session(env: dict[str, str], tmp_path: Path) -> AsyncIterator[ClientSession]:
    port = free_port()
    stderr_file = tmp_path / "http-stderr.log"
    with stderr_file.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for_port(port, proc, stderr_file)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                await session.initialize()
                yield session
    finally:
        assert stop_process(proc) is not None, "the server ignored SIGTERM and had to be killed"


async def test_argument_errors_over_http(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with _http_session(server_env(), tmp_path) as session:
            await _refusals(session)
