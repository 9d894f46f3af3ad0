"""Keep stdin and stdout for JSON-RPC only, for the whole life of a stdio server process.

The MCP SDK diverts fd 1 while it serves, but restores it on the way out, and a
thread still loading the embedding model at that moment (an import failing during
interpreter shutdown, say) would then print onto the protocol stream. Here the
protocol gets a private duplicate of the original stdout, and fd 1 -- with
sys.stdout for Python-level writes -- points at stderr until the process ends.
Likewise the requests are read from a private duplicate of stdin, and fd 0 reads
the null device, so nothing else in the process (or a child) can take a request line.
"""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO


class ProtocolStdout(io.TextIOBase):
    """Stands in for sys.stdout: the SDK serves `.buffer` (the wire); anything else printed goes to stderr."""

    def __init__(self, wire: BinaryIO) -> None:
        self.buffer = wire

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def reserve_stdout_for_protocol() -> BinaryIO:
    """Call before serving stdio (again is harmless); returns the wire replies are written to."""
    if isinstance(sys.stdout, ProtocolStdout):
        return sys.stdout.buffer
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = ProtocolStdout(wire)
    return wire


_stdin_wire: BinaryIO | None = None


def reserve_stdin_for_protocol() -> BinaryIO:
    """Call before serving stdio (again is harmless); returns the wire requests are read from."""
    global _stdin_wire
    if _stdin_wire is None:
        _stdin_wire = os.fdopen(os.dup(0), "rb")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    return _stdin_wire
