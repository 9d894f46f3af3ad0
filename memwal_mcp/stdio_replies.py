"""Answer the stdio request lines the MCP SDK cannot parse, instead of leaving the client waiting.

mcp's stdio transport hands a line that fails JSON-RPC parsing to the session as an
exception, and the session drops it: a client that sent, say, a lone surrogate escape
("\\ud800", valid JSON but not Unicode text) waits for a reply until its own timeout.
JSON-RPC 2.0 asks for an error response: Parse error (-32700, id null) for a line that
is not JSON, Invalid Request (-32600) for JSON that is not a request, and here Invalid
params (-32602) with the request's own id for text that is not Unicode.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def _rejected(exc: Exception) -> tuple[str | None, Any]:
    """(the line if it is not JSON, else None; the message the parser rejected, or None).

    pydantic gives the raw line as the input of a JSON error, and the whole message as
    the input of a missing-field error.
    """
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    for error in errors:
        if error.get("type") == "json_invalid" and isinstance(error.get("input"), (str, bytes)):
            return error["input"], None
    messages = [error["input"] for error in errors if isinstance(error.get("input"), dict)]
    if messages:
        return None, max(messages, key=len)
    top = [error.get("input") for error in errors if not error.get("loc")]
    return None, top[0] if top else None


def _is_text(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def reply_to_unparseable(exc: Exception) -> JSONRPCError | None:
    """The error response for a line the SDK rejected; None when no reply is due (a notification)."""
    line, data = _rejected(exc)
    if line is not None:
        try:
            data = json.loads(line)
        except ValueError:
            return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
                code=PARSE_ERROR, message="Parse error: the request line is not valid JSON"))
    if not isinstance(data, dict):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: a JSON-RPC request must be a JSON object"))
    if "id" not in data or "method" not in data:
        return None  # a notification, or the client's reply to a server request: nothing to answer
    request_id = data["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        request_id = None
    if not _is_text(data):
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
            code=INVALID_PARAMS,
            message="Invalid params: the request contains a lone UTF-16 surrogate escape (such as \\ud800), "
                    "which is not Unicode text; remove or replace it"))
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
        code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request this server understands"))
