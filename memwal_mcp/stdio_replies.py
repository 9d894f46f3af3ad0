"""Turn each stdio line into a message to serve, an error reply, or nothing; and messages into lines.

memwal reads the wire itself instead of through the MCP SDK's stdio reader, which loses
what JSON-RPC 2.0 says must be answered:
- a line it cannot parse reaches the session as an exception and is dropped, so the client
  waits for a reply until its own timeout (a line that is not JSON or not UTF-8, JSON
  nested deeper than the parser allows);
- a request whose id is not a string or an integer (null, 1.5, true, [1], {}) parses as a
  notification and gets no reply at all;
- a lone surrogate escape ("\\ud800") is valid JSON but not Unicode text, and the SDK's
  parser refuses the whole line. Python's parser reads it, so the request is served and
  the tool refuses the argument by name, as any other bad input.
And a reply that cannot be encoded (it repeats a lone surrogate the request carried) is
replaced by an error for the same request, instead of stopping the writer.
"""

from __future__ import annotations

import json
import logging
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

import mcp_types
import pydantic
import pydantic_core
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

log = logging.getLogger(__name__)

# Deepest nesting of arrays and objects a request may have: what the SDK's (pydantic's) JSON
# parser accepts, so stdio and HTTP refuse the same requests.
MAX_DEPTH = 201


@dataclass(frozen=True)
class Reply:
    """The error to send back instead of serving a line (a JSONRPCError alone could be the client's
    own error reply to a server request, which is served)."""

    error: JSONRPCError


Parsed = JSONRPCMessage | Reply | None


def _error(request_id: Any, code: int, message: str) -> Reply:
    return Reply(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)))


def _valid_id(value: Any) -> bool:
    """An id a reply can carry back: a string must be Unicode text, or the reply could not be written."""
    if isinstance(value, str):
        return _is_text(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True)
    except ValueError:  # holds an integer too long to print
        return "a value with a very large number"
    return text if len(text) <= 40 else text[:37] + "..."


def _too_deep() -> Reply:
    return _error(
        None, PARSE_ERROR, f"Parse error: the request nests arrays and objects more than {MAX_DEPTH} levels deep"
    )


def line_too_long(limit: int, start: bytes) -> Reply:
    """The answer to a line over `limit` bytes, of which only `start` was kept: for the request's own
    id when the line names it before its params (as clients write them), or a client that matches
    replies by id would wait for one until its timeout."""
    request_id = id_at_start(start)
    return _error(
        request_id,
        INVALID_REQUEST,
        f"Invalid Request: the request line is longer than the limit of {limit} bytes; it was not read",
    )


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _past_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def id_at_start(start: bytes) -> Any:
    """The id of the request whose line begins with `start`, when a top-level "id" comes before any
    member too long to be whole in `start`; None otherwise (the reply then carries a null id)."""
    text = start.decode("utf-8", "replace")
    pos = _past_space(text, 0)
    if not text.startswith("{", pos):
        return None
    pos += 1
    try:
        while True:
            pos = _past_space(text, pos)
            if not text.startswith('"', pos):
                return None
            key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = _past_space(text, pos)
            if not text.startswith(":", pos):
                return None
            pos = _past_space(text, pos + 1)
            value, pos = _DECODER.raw_decode(text, pos)
            pos = _past_space(text, pos)
            if pos >= len(text) or text[pos] not in ",}":
                return None  # the value may go on past `start` (a number cut short)
            if key == "id":
                return value if _valid_id(value) and "\ufffd" not in str(value) else None
            if text[pos] == "}":
                return None
            pos += 1
    except (ValueError, RecursionError):  # a member cut short at the end of `start`, or not JSON
        return None


def _depth(value: Any) -> int:
    """How deep `value` nests, without recursion: the client decides the depth."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                break
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_NOT_JSON, _TOO_DEEP = object(), object()


def _python_json(text: str) -> Any:
    """The value by Python's parser, which keeps lone surrogates (pydantic's refuses them)."""
    try:
        return json.loads(text, parse_constant=_no_constants)
    except RecursionError:  # nested past the interpreter's limit, beyond a surrogate pydantic stopped at
        return _TOO_DEEP
    except ValueError:
        return _NOT_JSON


def _invalid(data: Any) -> Reply | None:
    """The reply to JSON that is not a JSON-RPC message; None when none is due."""
    if isinstance(data, list):
        return _error(
            None,
            INVALID_REQUEST,
            "Invalid Request: batches (JSON arrays) are not supported; send one request object per line",
        )
    if not isinstance(data, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a JSON-RPC request must be a JSON object")
    if "method" not in data:
        if "result" in data or "error" in data:
            return None  # the client's reply to a server request: a reply is never answered
        request_id = data.get("id")
        return _error(
            request_id if _valid_id(request_id) else None,
            INVALID_REQUEST,
            "Invalid Request: the message has no method (nor result or error)",
        )
    if "id" not in data:
        return None  # a notification, however malformed: JSON-RPC never answers one
    return _envelope_error(data)


def _envelope_error(data: dict[str, Any]) -> Reply:
    request_id = data["id"]
    if isinstance(request_id, str) and not _is_text(request_id):
        return _error(
            None,
            INVALID_REQUEST,
            "Invalid Request: id is not valid Unicode (a lone UTF-16 surrogate "
            "escape such as \\ud800); the request was not run",
        )
    if not _valid_id(request_id):
        got = "not null (MCP does not allow a null id)" if request_id is None else f"got {_shown(request_id)}"
        return _error(
            None, INVALID_REQUEST, f"Invalid Request: id must be a string or an integer, {got}; the request was not run"
        )
    if data.get("jsonrpc") != "2.0":
        problem = 'jsonrpc must be "2.0"'
    elif not isinstance(data["method"], str):
        problem = "method must be a string"
    elif "params" in data and not isinstance(data["params"], dict):
        problem = "params must be an object"
    else:
        problem = "not a JSON-RPC 2.0 request this server understands"
    return _error(request_id, INVALID_REQUEST, f"Invalid Request: {problem}")


def _served(message: JSONRPCMessage, data: Any) -> JSONRPCMessage | Reply:
    # The SDK's message types read a request with an unusable id as a notification, id dropped.
    if isinstance(message, JSONRPCNotification) and isinstance(data, dict) and "id" in data:
        return _envelope_error(data)
    if isinstance(message, JSONRPCRequest) and isinstance(data, dict) and not _valid_id(message.id):
        return _envelope_error(data)
    return message


def _rejected_json(text: str, exc: ValidationError) -> Parsed:
    """The line pydantic could not read as JSON: too deep, not JSON, or JSON with lone surrogates."""
    reason = next((str(e.get("ctx", {}).get("error", "")) for e in exc.errors() if e.get("type") == "json_invalid"), "")
    if "recursion limit" in reason:
        return _too_deep()
    data = _python_json(text)
    if data is _NOT_JSON:
        detail = f" ({reason})" if reason else ""
        return _error(None, PARSE_ERROR, f"Parse error: the request line is not valid JSON{detail}")
    if data is _TOO_DEEP or _depth(data) > MAX_DEPTH:
        return _too_deep()
    try:
        message = jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        return _invalid(data)
    return _served(message, data)


def parse_line(line: bytes) -> Parsed:
    """A message for the session, the error reply due instead, or None (nothing to serve or answer)."""
    if not line.strip():
        return None  # a blank line is not a message
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(
            None,
            PARSE_ERROR,
            f"Parse error: the request line is not UTF-8 (byte 0x{line[exc.start]:02X} at offset {exc.start})",
        )
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        if any(error.get("type") == "json_invalid" for error in exc.errors()):
            return _rejected_json(text, exc)
        return _invalid(pydantic_core.from_json(text))  # JSON (pydantic read it), not a message
    if isinstance(message, JSONRPCNotification):  # rare: read it again only to see whether it had an id
        return _served(message, pydantic_core.from_json(text))
    return message


def encode(message: JSONRPCMessage) -> bytes | None:
    """The line to write for `message`; for a reply that cannot be encoded, an error for the same
    request instead; None when there is nothing to write."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except (pydantic_core.PydanticSerializationError, UnicodeEncodeError):
        pass
    if not isinstance(message, (JSONRPCResponse, JSONRPCError)):
        log.warning("dropped a %s that cannot be encoded as UTF-8", type(message).__name__)
        return None
    request_id = message.id
    if isinstance(request_id, str) and not _is_text(request_id):
        request_id = None
    return encode(JSONRPCError(jsonrpc="2.0", id=request_id, error=unencodable_reply()))


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_KINDS: dict[Any, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
}
_KIND_OF_ERROR = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _kind(annotation: Any) -> str | None:
    """How a field's type reads to a client ("a string"), through Optional and generic aliases."""
    options = (
        [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else [annotation]
    )
    if len(options) != 1:
        return None
    option = options[0]
    base = typing.get_origin(option) or option
    if isinstance(base, type) and issubclass(base, pydantic.BaseModel):
        return "an object"
    return _KINDS.get(base)


def _field_kind(request_model: str, loc: tuple[Any, ...]) -> str | None:
    """The kind of the field at `loc` in the request model named `request_model` (None when unknown)."""
    model: Any = getattr(mcp_types, request_model, None)
    annotation: Any = None
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
            return None
        field = next((f for name, f in model.model_fields.items() if part in (name, f.alias)), None)
        if field is None:
            return None
        annotation = field.annotation
        options = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        model = options[0] if len(options) == 1 else None
    return _kind(annotation)


def params_problem(method: str, exc: ValidationError) -> str:
    """One line naming what is wrong with a request's params, for the SDK's bare "Invalid request parameters"."""
    errors = exc.errors(include_url=False)
    if not errors:
        return f"Invalid params: the params of {method} are not valid"
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    where = ".".join(str(part) for part in loc) or "params"
    kind = _field_kind(exc.title, loc) if first["type"] == "missing" else _KIND_OF_ERROR.get(first["type"])
    if first["type"] == "missing":
        return f"Invalid params: {method} needs {where}" + (f", {kind}" if kind else "")
    if kind is not None:
        return f"Invalid params: {where} must be {kind}"
    return f"Invalid params: {where}: {first.get('msg', 'is not valid')}"


def _text_only(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD, so that any JSON parser reads it."""
    if isinstance(value, str):
        return value if _is_text(value) else "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_text_only(item) for item in value]
    if isinstance(value, dict):
        return {_text_only(key): _text_only(item) for key, item in value.items()}
    return value


def for_sdk(message: JSONRPCMessage) -> tuple[bytes, dict[str, Any] | None]:
    """A body the SDK's parser reads for `message` (HTTP and SSE), and the params as sent when that body had
    to differ from them: the SDK refuses a lone surrogate escape anywhere in a body, so those become U+FFFD
    on the way in, and the params as sent are put back before the request is served (then the tool refuses
    the argument by name, as over stdio)."""
    dumped = message.model_dump(by_alias=True, exclude_unset=True, mode="python")
    try:
        return json.dumps(dumped, ensure_ascii=False).encode("utf-8"), None
    except UnicodeEncodeError:
        pass
    params = dumped.get("params") if isinstance(dumped.get("params"), dict) else None
    return json.dumps(_text_only(dumped), ensure_ascii=False).encode("utf-8"), params


def unencodable_reply() -> ErrorData:
    """The error sent instead of a reply that would repeat a lone surrogate from its request."""
    return ErrorData(
        code=INVALID_PARAMS,
        message="Invalid params: the reply would repeat a lone UTF-16 surrogate "
        "escape (such as \\ud800) from the request, which is not Unicode text; remove or replace it",
    )


def is_text(value: Any) -> bool:
    """Whether every string in `value` (keys too) is Unicode text, i.e. it can be sent as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
