"""Keep stdout for JSON-RPC only, for the whole life of a stdio server process.

The MCP SDK diverts fd 1 while it serves, but restores it on the way out, and a
thread still loading the embedding model at that moment (an import failing during
interpreter shutdown, say) would then print onto the protocol stream. Here the
protocol gets a private duplicate of the original stdout, and fd 1 -- with
sys.stdout for Python-level writes -- points at stderr until the process ends.
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


def reserve_stdout_for_protocol() -> None:
    """Call once, before serving stdio."""
    if isinstance(sys.stdout, ProtocolStdout):
        return
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = ProtocolStdout(wire)
