"""What each stdio line becomes: a message to serve, the error reply JSON-RPC 2.0 asks for, or nothing."""

from __future__ import annotations

import json

import pytest
from mcp import types

from memwal_mcp.request_size import max_request_bytes
from memwal_mcp.stdio_replies import MAX_DEPTH, Reply, encode, line_too_long, parse_line
from memwal_mcp.validation import MAX_ITEMS, MAX_KEY_CHARS, MAX_SUPERSEDES


def reply(line: bytes) -> types.JSONRPCError:
    parsed = parse_line(line)
    assert isinstance(parsed, Reply), parsed
    return parsed.error


def nested(depth: int, inner: str = "") -> bytes:
    """A ping whose params nest `depth` levels deep in all (the request object and params count)."""
    arrays = depth - 2
    return (
        '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + "[" * arrays + inner + "]" * arrays + "}}"
    ).encode()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 100_000])
def test_a_request_nested_too_deep_is_a_parse_error(depth: int) -> None:
    error = reply(nested(depth))
    assert (
        error.id is None and error.error.code == -32700 and f"more than {MAX_DEPTH} levels deep" in error.error.message
    )


def test_a_request_nested_just_deep_enough_is_served() -> None:
    assert isinstance(parse_line(nested(MAX_DEPTH)), types.JSONRPCRequest)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 100_000])
@pytest.mark.parametrize("where", ["inside", "before"])
def test_a_deep_request_with_a_lone_surrogate_is_a_parse_error_too(depth: int, where: str) -> None:
    """Python's parser reads what pydantic's refuses (a lone surrogate); it must not be let past the depth limit,
    whether pydantic's parser stopped at the depth (surrogate inside) or at the surrogate (before the nesting)."""
    if where == "inside":
        line = nested(depth, '"\\ud800"')
    else:
        line = nested(depth).replace(b'"params":{', b'"params":{"s":"\\ud800",')
    error = reply(line)
    assert error.error.code == -32700 and "levels deep" in error.error.message, error


@pytest.mark.parametrize(
    "line",
    [
        b"\xff\xfe",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\xc3"}}',
        b"\x00\x01\x02\x80binary",
        b"\xed\xa0\x80",
    ],
)  # the last: a surrogate in UTF-8 bytes
def test_a_line_that_is_not_utf8_is_a_parse_error_naming_the_byte(line: bytes) -> None:
    error = reply(line)
    assert error.id is None and error.error.code == -32700 and "not UTF-8 (byte 0x" in error.error.message


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 3, "method": ',
        b"garbage",
        b"\x00\x01",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800",}}',
    ],
)
def test_a_line_that_is_not_json_is_a_parse_error_without_id(line: bytes) -> None:
    error = reply(line)
    assert error.id is None and error.error.code == -32700 and "not valid JSON" in error.error.message


@pytest.mark.parametrize("request_id", ["null", "1.5", "{}", "[1]", "true", "false", '{"a": [1]}'])
@pytest.mark.parametrize("params", ["", ', "params": {}', ', "params": 5'])
def test_a_request_whose_id_is_not_a_string_or_integer_is_an_invalid_request(request_id: str, params: str) -> None:
    error = reply(f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "ping"{params}}}'.encode())
    assert error.id is None and error.error.code == -32600
    assert error.error.message.startswith("Invalid Request: id must be a string or an integer"), error.error.message
    if request_id == "null":
        assert "MCP does not allow a null id" in error.error.message


@pytest.mark.parametrize("line", [b"[1, 2]", b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]'])
def test_a_batch_is_an_invalid_request(line: bytes) -> None:
    error = reply(line)
    assert error.id is None and error.error.code == -32600 and "batches" in error.error.message


@pytest.mark.parametrize("line", [b'"text"', b"42", b"null"])
def test_json_that_is_not_an_object_is_an_invalid_request(line: bytes) -> None:
    error = reply(line)
    assert error.id is None and error.error.code == -32600


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b'{"jsonrpc": "2.0", "id": "r-1", "method": 12}', "method must be a string"),
        (b'{"jsonrpc": "1.0", "id": "r-1", "method": "ping"}', 'jsonrpc must be "2.0"'),
        (b'{"jsonrpc": "2.0", "id": "r-1", "method": "ping", "params": [1]}', "params must be an object"),
        (b'{"jsonrpc": "2.0", "id": "r-1"}', "no method"),
    ],
)
def test_a_malformed_request_gets_invalid_request_with_its_id(line: bytes, problem: str) -> None:
    error = reply(line)
    assert error.id == "r-1" and error.error.code == -32600 and problem in error.error.message


def test_a_request_with_a_lone_surrogate_is_served_so_the_tool_can_name_the_argument() -> None:
    parsed = parse_line(
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
        b'"params": {"name": "memwal_remember", "arguments": {"text": "a \\ud800 b"}}}'
    )
    assert isinstance(parsed, types.JSONRPCRequest) and parsed.id == 7
    assert parsed.params is not None and parsed.params["arguments"]["text"] == "a \ud800 b"


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"t": "\\ud800"}}',  # a notification
        b'{"jsonrpc": "2.0", "method": 5}',  # a malformed notification
        b'{"jsonrpc": "2.0", "id": 4, "result": {"t": "\\udfff"}}',  # the client's reply to a server request
        b'{"jsonrpc": "2.0", "id": 1.5, "result": {}}',
        b"",
        b"   \r\n",
        b"\n",  # blank lines
    ],
)
def test_nothing_is_answered_to_notifications_replies_and_blank_lines(line: bytes) -> None:
    parsed = parse_line(line)
    assert not isinstance(parsed, Reply), parsed


def test_a_well_formed_request_and_a_client_error_reply_are_served() -> None:
    assert isinstance(parse_line(b'{"jsonrpc":"2.0","id":"a","method":"ping"}\r\n'), types.JSONRPCRequest)
    client_error = parse_line(b'{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}')
    assert isinstance(client_error, types.JSONRPCError)  # served (it answers a server request), not answered


def test_a_reply_that_repeats_a_lone_surrogate_becomes_an_error_for_the_same_request() -> None:
    result = types.JSONRPCResponse(jsonrpc="2.0", id=9, result={"text": "Unknown tool: \ud800"})
    sent = json.loads(encode(result) or b"")
    assert sent["id"] == 9 and sent["error"]["code"] == -32602 and "surrogate" in sent["error"]["message"]
    echoed_id = types.JSONRPCResponse(jsonrpc="2.0", id="\udc00", result={})
    sent = json.loads(encode(echoed_id) or b"")
    assert sent["id"] is None and sent["error"]["code"] == -32602


def test_a_server_notification_that_cannot_be_encoded_is_dropped() -> None:
    note = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"data": "\ud800"})
    assert encode(note) is None


def test_an_encoded_message_is_one_line() -> None:
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "a\nb\u2028c"}))
    assert line is not None and line.endswith(b"\n") and line.count(b"\n") == 1


@pytest.mark.parametrize(
    ("start", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"text":"yyyy', 7),
        (b' { "id" : "req-\\u00e9" , "method":"tools/call","params":{"x":[1,2', "req-\u00e9"),
        (b'{"method":"tools/call","jsonrpc":"2.0","id":-3,"params":{', -3),
        (b'{"params":{"arguments":{"id":5,"text":"yyyy', None),  # an "id" inside the params is not the request's
        (b'{"jsonrpc":"2.0","method":"ping","params":{"x":"yyyy', None),  # the id comes after the params
        (b'{"jsonrpc":"2.0","id":123', None),  # the number may go on
        (b'{"jsonrpc":"2.0","id":null,"method":"ping","params":{"x":"y', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":"y', None),
        (b'{"jsonrpc":"2.0","id":"\xff\xfe","method":"ping","params":{"x":"y', None),
        (b'["jsonrpc","id",1', None),
        (b"garbage", None),
        (b"", None),
    ],
)
def test_a_line_over_the_limit_is_answered_for_the_id_at_its_start(start: bytes, request_id: object) -> None:
    reply = line_too_long(4096, start)
    assert reply.error.id == request_id and reply.error.error.code == types.INVALID_REQUEST
    assert "longer than the limit of 4096 bytes" in reply.error.error.message


def test_the_request_limit_holds_the_largest_call_within_the_tool_limits() -> None:
    """100 items of max_text_bytes, every character sent as a \\uXXXX escape, every other field at its limit."""
    text_bytes = 65536
    item = {
        "text": "a" * text_bytes,
        "namespace": "n" * 64,
        "idempotency_key": "\U0001f600" * MAX_KEY_CHARS,
        "occurred_at": "2026-12-02T13:19:36.123456+05:30",
        "expires_at": "9999-12-31T23:59:59.999999+00:00",
        "supersedes": ["m_" + "x" * 62] * MAX_SUPERSEDES,
    }
    call = {
        "jsonrpc": "2.0",
        "id": "r" * 1000,
        "method": "tools/call",
        "params": {"name": "memwal_remember_many", "arguments": {"items": [item] * MAX_ITEMS, "wait_ms": 30000}},
    }
    # ensure_ascii escapes the emoji (a surrogate pair, 12 bytes); escape the ASCII text too, as a client may.
    line = json.dumps(call, ensure_ascii=True).replace('"' + "a" * text_bytes + '"', '"' + "\\u0061" * text_bytes + '"')
    assert json.loads(line)["params"]["arguments"]["items"][0]["text"] == item["text"]
    assert len(line.encode()) <= max_request_bytes(text_bytes) < len(line.encode()) * 1.05  # and not far above
    assert max_request_bytes(1024) == 4 * 1024 * 1024  # never below the SDK's own default
