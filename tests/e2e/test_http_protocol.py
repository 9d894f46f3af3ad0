"""Over HTTP and SSE every message gets the answer it gets over stdio (stdio_replies decides for all three).

A real `memwal-mcp serve --transport http|sse` on 127.0.0.1, raw bodies posted with httpx: a lone surrogate
escape in an argument is the tool error naming it, a request whose id is null, 1.5 or true is an Invalid
Request (not a silent 202), a batch is one clear Invalid Request, malformed tools/call params are named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from .conftest import CALL_TIMEOUT_S
from .http_helpers import INITIALIZE, JSON_AND_SSE, open_session, reply_of, rpc, serve, sse_stream, tool_call

pytestmark = pytest.mark.slow


def _call(request_id: bytes, tool: str, arguments: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + request_id
        + b',"method":"tools/call","params":{"name":"'
        + tool.encode()
        + b'","arguments":'
        + arguments
        + b"}}"
    )


SURROGATE_TEXT = _call(b"6", "memwal_remember", b'{"text":"a \\ud800"}')
BAD_IDS = [_call(i, "memwal_remember", b'{"text":"sent with an unusable id"}') for i in (b"null", b"1.5", b"true")]
BATCH = b'[{"jsonrpc":"2.0","id":4,"method":"ping"}]'
MALFORMED = [
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}', "tools/call needs params.name, a string"),
    (_call(b"8", "memwal_list", b"[1]"), "params.arguments must be an object"),
    (_call(b"10", "memwal_\\ud800", b"{}"), "lone UTF-16 surrogate"),
]


def _check_surrogate(reply: dict[str, Any]) -> None:
    assert reply["id"] == 6 and reply["result"]["isError"] is True, reply
    text = reply["result"]["content"][0]["text"]
    assert text.startswith("Error executing tool memwal_remember: ") and "text is not valid Unicode" in text, text


def _check_unusable_id(reply: dict[str, Any]) -> None:
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "id must be a string or an integer" in reply["error"]["message"], reply


def _check_batch(reply: dict[str, Any]) -> None:
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "batches" in reply["error"]["message"] and "\n" not in reply["error"]["message"], reply


async def _nothing_stored(client: httpx2.AsyncClient, url: str, session_id: str) -> None:
    listed = reply_of(await tool_call(client, url, session_id, "memwal_list", {}))
    assert listed["result"]["structuredContent"]["memories"] == [], listed
    recalled = reply_of(
        await tool_call(client, url, session_id, "memwal_recall", {"query": "sent with an unusable id"})
    )
    assert recalled["result"]["structuredContent"]["hits"] == [], recalled


async def test_http_answers_each_message_as_stdio_does(server_env, tmp_path: Path) -> None:
    with serve(server_env(), tmp_path, "http") as served, anyio.fail_after(120):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            session_id = await open_session(client, served.mcp)
            headers = {**JSON_AND_SSE, "mcp-session-id": session_id}

            async def post(body: bytes) -> dict[str, Any]:
                response = await client.post(served.mcp, content=body, headers=headers)
                assert response.status_code in (200, 400), (response.status_code, response.text)
                return reply_of(response)

            _check_surrogate(await post(SURROGATE_TEXT))
            for body in BAD_IDS:
                _check_unusable_id(await post(body))
            _check_batch(await post(BATCH))
            for body, named in MALFORMED:
                reply = await post(body)
                assert reply["error"]["code"] == -32602 and named in reply["error"]["message"], reply
            # A body that does not say it is JSON: a JSON-RPC error too, not the SDK's plain-text 400.
            for kind, said in (("text/plain", "got 'text/plain'"), (None, "none was sent")):
                sent = {key: value for key, value in headers.items() if key.lower() != "content-type"}
                if kind is not None:
                    sent["Content-Type"] = kind
                response = await client.post(served.mcp, content=SURROGATE_TEXT, headers=sent)
                assert response.status_code == 415, (response.status_code, response.text)
                error = response.json()["error"]
                assert error["code"] == -32600 and error["message"] == f"Content-Type must be application/json; {said}"
            await _nothing_stored(client, served.mcp, session_id)


async def test_sse_answers_each_message_on_its_stream_as_stdio_does(server_env, tmp_path: Path) -> None:
    with serve(server_env(), tmp_path, "sse") as served, anyio.fail_after(120):
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client, sse_stream(client, served.base) as stream:
            headers = {"Content-Type": "application/json"}

            async def post(body: bytes) -> dict[str, Any]:
                response = await client.post(stream.messages_url, content=body, headers=headers)
                assert response.status_code in (202, 400), (response.status_code, response.text)
                with anyio.fail_after(CALL_TIMEOUT_S):
                    return await stream.next_message()

            await post(json.dumps(INITIALIZE).encode())
            accepted = await client.post(stream.messages_url, json=rpc("notifications/initialized", id=None))
            assert accepted.status_code == 202, accepted.text
            _check_surrogate(await post(SURROGATE_TEXT))
            for body in BAD_IDS:
                _check_unusable_id(await post(body))
            _check_batch(await post(BATCH))
            for body, named in MALFORMED:
                reply = await post(body)
                assert reply["error"]["code"] == -32602 and named in reply["error"]["message"], reply
            listed = await post(json.dumps(rpc("tools/call", {"name": "memwal_list", "arguments": {}}, id=9)).encode())
            assert listed["id"] == 9 and listed["result"]["structuredContent"]["memories"] == [], listed
