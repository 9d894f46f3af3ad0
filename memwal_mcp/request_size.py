"""How large a single request may be, over stdio (one line) and HTTP (one body).

The limit follows from the tool limits, so that every call within them is read: the largest is a
`memwal_remember_many` of MAX_ITEMS items, each text at `max_text_bytes`. A client may send any
character as a \\uXXXX escape (six bytes for what is one byte of UTF-8; a four-byte character is
a surrogate pair, twelve bytes), so a text can take up to six times its UTF-8 size on the wire.
The item's other fields (namespace, idempotency key, dates, up to MAX_SUPERSEDES ids), escaped
the same way, fit in ITEM_OVERHEAD, and the JSON-RPC envelope in ENVELOPE. With the default
64 KiB texts this is 39.1 MiB; never less than the SDK's own 4 MiB default, and never more than
CEILING: with texts near the largest `max_text_bytes` the formula asks for gigabytes, which one
process must not be made to buffer for a single line; such a call gets an error naming the limit.
"""

from __future__ import annotations

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from .validation import MAX_ITEMS

ESCAPED = 6  # wire bytes per byte of UTF-8 text, at worst
ITEM_OVERHEAD = 16 * 1024  # an item's fields but its text, escaped, with their names
ENVELOPE = 64 * 1024  # jsonrpc, id, method, tool name, wait_ms, _meta
CEILING = 256 * 1024 * 1024


def max_request_bytes(max_text_bytes: int) -> int:
    """The largest request a client may send, for texts of at most `max_text_bytes`."""
    largest_call = MAX_ITEMS * (ESCAPED * max_text_bytes + ITEM_OVERHEAD) + ENVELOPE
    return min(CEILING, max(DEFAULT_MAX_REQUEST_BODY_SIZE, largest_call))
