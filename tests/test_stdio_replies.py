"""Error replies for request lines the MCP SDK's parser rejects (the lines come from its real parser)."""

from __future__ import annotations

import pytest
from mcp import types

from memwal_mcp.stdio_replies import reply_to_unparseable


def rejected(line: str) -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # noqa: BLE001 -- what the SDK's stdin reader would hand on
        return exc
    raise AssertionError(f"the SDK accepted {line!r}")


def test_a_lone_surrogate_is_invalid_params_with_the_request_id() -> None:
    reply = reply_to_unparseable(rejected(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {"text": "a \\ud800 b"}}}'))
    assert reply is not None and reply.id == 7
    assert reply.error.code == -32602 and "surrogate" in reply.error.message


def test_a_line_that_is_not_json_is_a_parse_error_without_id() -> None:
    reply = reply_to_unparseable(rejected('{"jsonrpc": "2.0", "id": 3, "method": '))
    assert reply is not None and reply.id is None and reply.error.code == -32700


@pytest.mark.parametrize("line", ['[1, 2]', '"text"', '42'])
def test_json_that_is_not_an_object_is_an_invalid_request(line: str) -> None:
    reply = reply_to_unparseable(rejected(line))
    assert reply is not None and reply.id is None and reply.error.code == -32600


def test_a_malformed_request_gets_invalid_request_with_its_id() -> None:
    reply = reply_to_unparseable(rejected('{"jsonrpc": "2.0", "id": "r-1", "method": 12}'))
    assert reply is not None and reply.id == "r-1" and reply.error.code == -32600


@pytest.mark.parametrize("line", [
    '{"jsonrpc": "2.0", "method": "notifications/x", "params": {"t": "\\ud800"}}',  # a notification
    '{"jsonrpc": "2.0", "id": 4, "result": {"t": "\\udfff"}}',  # the client's reply to a server request
])
def test_no_reply_is_due_to_notifications_and_replies(line: str) -> None:
    assert reply_to_unparseable(rejected(line)) is None
