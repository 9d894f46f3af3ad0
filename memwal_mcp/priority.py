"""Low CPU priority for curation's work, so tool calls get the cores first.

Curation is work nobody waits on; a remember or a recall is. On Linux a thread's nice
value is its own, and threads it starts inherit it: curation's embedding copies and its
nomination scans run at nice +BACKGROUND_NICE, and a tool call (nice 0) preempts them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

BACKGROUND_NICE = 10
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def lower_this_thread() -> None:
    """Put the calling thread at nice +BACKGROUND_NICE (never raise its priority)."""
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, max(BACKGROUND_NICE, os.getpriority(os.PRIO_PROCESS, me)))
    except (OSError, AttributeError) as exc:  # a sandbox may refuse, another OS may lack it; the work still gets done
        log.info("background work keeps normal priority: %s", exc)


def run_in_background(fn: Callable[..., T], *args: object) -> T:
    """fn(*args) on the low-priority thread, waiting for it (call from a worker thread).
    One thread: curation runs one lane's batches in order, so there is one scan at a time."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="memwal-curation-scan", initializer=lower_this_thread)
    return _pool.submit(fn, *args).result()
