"""Giving freed memory back to the system, and keeping less of it in the first place.

glibc keeps memory that Python and C libraries free in its heaps for reuse, so the
process's resident size stays at its high-water mark after a burst of temporary
allocations: loading a lane's matrix (1.5 MB chunk blobs, one after another) left 155 MiB
resident beyond the matrix at 100k, and replacing an ONNX session 57 MiB. After such a
burst, `trim` hands the free pages back. A no-op off glibc.
"""

from __future__ import annotations

import os
import sys

_M_ARENA_MAX = -8  # glibc's mallopt parameters
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 * 1024


def _libc():  # -> ctypes.CDLL | None
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6")
    except OSError:  # musl or another C library
        return None


def trim() -> None:
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


LARGE = 1 << 30  # resident bytes from which memory counts more than the last bit of speed


def resident_bytes() -> int:
    """This process's resident set size (0 where /proc does not tell)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def trim_if_large() -> None:
    """`trim` when the process is LARGE already: embedding leaves about 90 MiB per model copy
    behind, and trimming after every ONNX run costs about 5 % of curation throughput -- worth
    it only where memory is large already (a lane of 1M vectors is 1.4 GiB)."""
    if resident_bytes() >= LARGE:
        trim()


def limit_arenas(arenas: int = 2) -> None:
    """At most `arenas` malloc arenas for the threads started from now on. glibc gives each
    thread that allocates its own arena (up to 8 per core), and each keeps what it freed:
    with three embedding models on their threads, peak RSS was 684 MiB with the default and
    598 MiB with two, at the same speed. MALLOC_ARENA_MAX, when set, wins."""
    libc = _libc()
    if libc is not None and "MALLOC_ARENA_MAX" not in os.environ and hasattr(libc, "mallopt"):
        libc.mallopt(_M_ARENA_MAX, arenas)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> None:
    """Blocks of `threshold` bytes or more get pages of their own, handed back when freed.
    glibc raises this threshold each time such a block is freed (up to 32 MiB), after which
    ONNX Runtime's per-run tensors (1-4 MiB each, the arena being off) come from the heaps and
    stay there: a 2,000-fact burst left the stdio server at 334 MiB (227 MiB with the threshold
    fixed, peak 262 instead of 334), for no measurable CPU time (22-24 s of CPU for the burst
    either way). MALLOC_MMAP_THRESHOLD_, when set, wins."""
    libc = _libc()
    if libc is not None and "MALLOC_MMAP_THRESHOLD_" not in os.environ and hasattr(libc, "mallopt"):
        libc.mallopt(_M_MMAP_THRESHOLD, threshold)
