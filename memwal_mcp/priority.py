"""Low CPU priority for curation's work, so tool calls get the cores first.

Curation is work nobody waits on; a remember or a recall is. On Linux a thread's nice
value is its own, and threads it starts inherit it: curation's embedding copies and its
ONNX Runtime threads run at nice +BACKGROUND_NICE, and a tool call (nice 0) preempts them.
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger(__name__)

BACKGROUND_NICE = 10


def lower_this_thread() -> None:
    """Put the calling thread at nice +BACKGROUND_NICE (never raise its priority)."""
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, max(BACKGROUND_NICE, os.getpriority(os.PRIO_PROCESS, me)))
    except (OSError, AttributeError) as exc:  # a sandbox may refuse, another OS may lack it; the work still gets done
        log.info("background work keeps normal priority: %s", exc)
