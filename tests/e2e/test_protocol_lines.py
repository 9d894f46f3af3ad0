"""Every stdio line gets the answer JSON-RPC 2.0 asks for, and the server survives any line.

Raw lines written to the real `memwal-mcp` over a pipe: JSON nested far past any parser's
limit, bytes that are not UTF-8, binary garbage, a line of several MiB, requests whose id
is not a string or an integer, requests before `initialize`, lone surrogate escapes. After
each the server still answers, stdout carries nothing but JSON-RPC, and it exits cleanly
at the end of its input.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from .conftest import PROTOCOL_VERSION, RawServer

pytestmark = pytest.mark.slow

INIT_PARAMS = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "lines", "version": "1"}}


async def _line(server: RawServer, raw: bytes, timeout: float = 30) -> dict[str, Any]:
    """Write one line; return the next line the server writes (each of these lines gets exactly one)."""
    seen = len(server.stdout_lines)
    assert server.proc.stdin is not None
    server.proc.stdin.write(raw + b"\n")
    await server.proc.stdin.drain()
    with anyio.fail_after(timeout):
        while len(server.stdout_lines) <= seen:
            stdout_closed = server._readers[0].done()  # the server closed stdout: it died
            assert not stdout_closed, "the server died:\n" + "".join(server.stderr_lines[-30:])
            await anyio.sleep(0.01)
    return json.loads(server.stdout_lines[seen])


async def _alive(server: RawServer) -> None:
    pong = await server.request("ping", timeout=30)
    assert pong.get("result") == {}, pong


def _deep(depth: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"


async def _started(server_env, raw_servers, initialize: bool = True) -> RawServer:
    server = await RawServer.start(server_env())
    raw_servers.append(server)
    if initialize:
        await server.initialize()
    return server


async def _finish(server: RawServer) -> None:
    """Still serving; exits 0 at the end of its input; nothing but JSON-RPC on stdout, no traceback."""
    remembered = await server.call_tool("memwal_remember", {"text": "Still serving after the odd lines"})
    assert remembered["isError"] is False, remembered
    assert await server.close_stdin_and_wait() == 0, "".join(server.stderr_lines[-30:])
    for line in server.stdout_lines:
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
    assert "Traceback" not in "".join(server.stderr_lines), "".join(server.stderr_lines)[-4000:]


async def test_deep_garbage_and_huge_lines_are_answered_and_the_server_survives(server_env, raw_servers) -> None:
    with anyio.fail_after(180):
        # Small texts keep the line limit at its floor, 4 MiB (request_size says how it follows from them).
        server = await _started(lambda: server_env(MEMWAL_LIMITS__MAX_TEXT_BYTES="1024"), raw_servers)
        for depth in (1_000, 100_000):
            reply = await _line(server, _deep(depth))
            assert reply["id"] is None and reply["error"]["code"] == -32700, reply
            assert "levels deep" in reply["error"]["message"], reply
            await _alive(server)

        for raw in (
            b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":"caf\xe9"}}',  # Latin-1, not UTF-8
            b"\xff\xfe\x00\x01\x02\x80\x9b\xc0garbage\x7f",
            bytes(range(256)).replace(b"\n", b""),
        ):
            reply = await _line(server, raw)
            assert reply["id"] is None and reply["error"]["code"] == -32700, reply
            assert "not UTF-8" in reply["error"]["message"], reply
            await _alive(server)

        reply = await _line(
            server, b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"' + b"y" * (5 << 20) + b'"}}'
        )
        assert reply["id"] == 6 and reply["error"]["code"] == -32600, reply  # its id, read from the line's start
        assert "request line is longer than the limit of 4194304 bytes" in reply["error"]["message"], reply
        reply = await _line(
            server, b'{"jsonrpc":"2.0","method":"ping","params":{"x":"' + b"y" * (5 << 20) + b'"},"id":7}'
        )
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply  # the id comes too late to be read
        await _alive(server)
        await _finish(server)


async def test_a_request_whose_id_is_not_a_string_or_integer_is_answered(server_env, raw_servers) -> None:
    with anyio.fail_after(120):
        server = await _started(server_env, raw_servers)
        for request_id in (b"null", b"1.5", b"{}", b"[1]", b"true"):
            reply = await _line(server, b'{"jsonrpc":"2.0","id":' + request_id + b',"method":"ping"}', timeout=10)
            assert reply["id"] is None and reply["error"]["code"] == -32600, (request_id, reply)
            assert "id must be a string or an integer" in reply["error"]["message"], reply
        reply = await _line(server, b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', timeout=10)
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
        await _finish(server)


async def test_a_request_before_initialize_is_told_to_initialize_first(server_env, raw_servers) -> None:
    with anyio.fail_after(120):
        server = await _started(server_env, raw_servers, initialize=False)
        for method, params in (
            ("tools/list", {}),
            ("tools/call", {"name": "memwal_recall", "arguments": {"query": "x"}}),
        ):
            early = await server.request(method, params)
            assert early["error"]["code"] == -32602, early
            assert "came before initialize; send initialize first" in early["error"]["message"], early
            assert early["error"]["data"], early
        assert (await server.request("ping"))["result"] == {}  # ping needs no handshake
        await server.initialize()
        await _finish(server)


# A lone surrogate escape in each argument of each tool: the tool error names the argument.
SURROGATES = [
    ("memwal_remember", '{"text": "lone \\ud800 surrogate"}', "text is not valid Unicode"),
    ("memwal_remember", '{"text": "fact", "idempotency_key": "\\udfff"}', "idempotency_key is not valid Unicode"),
    ("memwal_remember", '{"text": "fact", "namespace": "\\ud800"}', "namespace"),
    ("memwal_remember", '{"text": "fact", "occurred_at": "2026-11-30\\ud800"}', "occurred_at"),
    ("memwal_remember_status", '{"job_ids": ["\\ud800"]}', "job_ids"),
    ("memwal_recall", '{"query": "\\udc00"}', "query is not valid Unicode"),
    ("memwal_recall", '{"query": "coffee", "since": "\\udc00"}', "since"),
    ("memwal_list", '{"namespace": "\\ud83d"}', "namespace"),
    ("memwal_list", '{"cursor": "\\ud83d"}', "cursor"),
    ("memwal_history", '{"memory_id": "\\ud800"}', "memory_id"),
    ("memwal_forget", '{"memory_id": "\\ud800"}', "memory_id"),
    ("memwal_recall", '{"query": "coffee", "\\ud800": 1}', "argument name is not valid Unicode"),
]


def _call_line(request_id: Any, tool: str, arguments_json: str) -> bytes:
    return (
        '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "method": "tools/call", '
        '"params": {"name": "' + tool + '", "arguments": ' + arguments_json + "}}"
    ).encode("ascii")


async def test_a_lone_surrogate_is_the_tool_error_naming_the_argument(server_env, raw_servers) -> None:
    with anyio.fail_after(120):
        server = await RawServer.start(server_env())
        raw_servers.append(server)
        await server.initialize()
        for number, (tool, arguments, named) in enumerate(SURROGATES, start=100):
            reply = await _line(server, _call_line(number, tool, arguments))
            assert reply["id"] == number and "result" in reply, (tool, arguments, reply)
            assert reply["result"]["isError"] is True, reply
            text = reply["result"]["content"][0]["text"]
            assert text.startswith(f"Error executing tool {tool}: ") and named in text, (arguments, text)

        # Where no argument carries it, a JSON-RPC error says what is wrong (with the id when it is usable).
        reply = await _line(server, _call_line(200, "memwal_\\ud800", "{}"))
        assert reply["id"] == 200 and reply["error"]["code"] == -32602 and "surrogate" in reply["error"]["message"]
        # An id that is not Unicode text is not an id a reply can carry: an Invalid Request, as any unusable id.
        reply = await _line(server, b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
        assert reply["id"] is None and reply["error"]["code"] == -32600 and "surrogate" in reply["error"]["message"]

        await _alive(server)
        listed = await server.call_tool("memwal_list", {})
        assert listed["structuredContent"]["memories"] == [], listed  # nothing was stored
        assert await server.close_stdin_and_wait() == 0
    for line in server.stdout_lines:
        json.loads(line)


# tools/call params of the wrong shape: the error names what is wrong instead of a bare "Invalid request parameters".
MALFORMED_CALLS = [
    (b'{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{}}', "tools/call needs params.name, a string"),
    (
        b'{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{"name":"memwal_list","arguments":[1]}}',
        "params.arguments must be an object",
    ),
    (b'{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{"name":5}}', "params.name must be a string"),
    (b'{"jsonrpc":"2.0","id":902,"method":"resources/read","params":{}}', "resources/read needs params.uri, a string"),
]


async def test_malformed_tools_call_params_are_named(server_env, raw_servers) -> None:
    with anyio.fail_after(120):
        server = await _started(server_env, raw_servers)
        for raw, named in MALFORMED_CALLS:
            reply = await _line(server, raw)
            assert reply["id"] == 902 and reply["error"]["code"] == -32602, (raw, reply)
            assert named in reply["error"]["message"] and "\n" not in reply["error"]["message"], (raw, reply)
        await _finish(server)


async def test_requests_written_just_before_stdin_closes_are_served(server_env, raw_servers) -> None:
    """A client may write its whole conversation and close stdin at once (a shell pipe): every request
    already read is answered, and the remember is stored, before the server exits."""
    env = server_env()
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memwal_remember", "arguments": {"text": "The piped fact is kept"}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    with anyio.fail_after(120):
        server = await RawServer.start(env)
        raw_servers.append(server)
        assert server.proc.stdin is not None
        server.proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        assert await server.close_stdin_and_wait(timeout=90) == 0, "".join(server.stderr_lines[-30:])
        replies = {message["id"]: message for message in map(json.loads, server.stdout_lines)}
        remembered = replies[2]
        assert "result" in remembered and remembered["result"]["isError"] is False, remembered
        assert replies[3]["result"] == {}, replies[3]
        job_id = remembered["result"]["structuredContent"]["job_id"]

        again = await _started(lambda: env, raw_servers)
        status = await again.call_tool("memwal_remember_status", {"job_ids": [job_id]})
        assert status["isError"] is False, status
        assert [job["job_id"] for job in status["structuredContent"]["jobs"]] == [job_id], status
        await _finish(again)
