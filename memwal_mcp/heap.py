"""Giving freed memory back to the system.

glibc keeps memory that Python and C libraries free in its heaps for reuse, so the
process's resident size stays at its high-water mark after a burst of temporary
allocations: loading a lane's matrix (1.5 MB chunk blobs, one after another) left 155 MiB
resident beyond the matrix at 100k, and replacing an ONNX session 57 MiB. After such a
burst, `trim` hands the free pages back. A no-op off glibc.
"""

from __future__ import annotations

import sys


def trim() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # musl or another C library
        pass
