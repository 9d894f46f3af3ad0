"""Who holds a lane's curation lease, said the same way by every backend.

A holder is host:pid:nonce, so a process restarted on the same host reclaims a dead holder's
lane at once instead of waiting out the lease; on another host only the expiry can tell.
"""

from __future__ import annotations

import os
import secrets
import socket

_HOST = socket.gethostname()


def lease_holder_id() -> str:
    """host:pid:nonce. The pid lets a restarted process on the same host reclaim a dead holder's lane at once."""
    return f"{_HOST}:{os.getpid()}:{secrets.token_hex(4)}"


def holder_is_dead(holder: str) -> bool:
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit():
        return False  # another machine: only the expiry can tell
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists but not ours to signal
        return False
    return False
