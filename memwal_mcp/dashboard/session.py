"""Who a dashboard request acts for, and proof that a form came from the dashboard itself.

A signed-in browser holds a random session id in a cookie (HttpOnly, SameSite=Strict, Secure over
HTTPS); the session, kept in this process's memory, holds the owner, the scopes and the *hash* of
the token, never the token. Each request re-checks that hash with the token registry, so revoking
a token ends its sessions within the registry's few seconds of caching. Every state-changing form
carries the session's CSRF token; the sign-in form, before any session exists, carries a nonce
signed with a key of this process, matched against a short-lived cookie (double submit).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.responses import Response

COOKIE = "memwal_session"
SIGNIN_COOKIE = "memwal_signin"

IDLE_S = 8 * 3600.0  # a session unused this long is over
LIFETIME_S = 24 * 3600.0  # and any session after this long, used or not
SIGNIN_S = 3600.0  # how long a sign-in form stays valid
MAX_SESSIONS = 10_000  # beyond this the least recently used session ends (memory is bounded)


@dataclass(slots=True)
class Session:
    id: str
    owner: str
    scopes: frozenset[str]
    token_hash: str | None  # None: the configured owner, on a server without any token
    csrf: str
    created: float
    used: float
    flash: list[str] = field(default_factory=list)  # said once, on the next page shown

    def can(self, scope: str) -> bool:
        return scope in self.scopes

    def csrf_ok(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(self.csrf.encode(), sent.encode("utf-8", "replace"))

    def take_flash(self) -> list[str]:
        said, self.flash = self.flash, []
        return said


class SessionBook:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def open(self, owner: str, scopes: frozenset[str], token_hash: str | None) -> Session:
        now = self._clock()
        session = Session(secrets.token_urlsafe(32), owner, scopes, token_hash, secrets.token_urlsafe(32), now, now)
        self._sessions[session.id] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        now = self._clock()
        if now - session.used > IDLE_S or now - session.created > LIFETIME_S:
            self.close(session_id)
            return None
        session.used = now
        self._sessions.move_to_end(session_id)
        return session

    def close(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)


class SigninGuard:
    """CSRF for the sign-in form: a nonce in a cookie and its MAC in the form. A page elsewhere can
    neither read the cookie nor forge the MAC, so it cannot sign a browser in with its own token."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def issue(self) -> tuple[str, str]:
        """(nonce for the cookie, value for the form)."""
        nonce = f"{int(time.time())}.{secrets.token_urlsafe(16)}"
        return nonce, self._mac(nonce)

    def check(self, nonce: str | None, sent: str | None) -> bool:
        if not nonce or not sent:
            return False
        issued, _, _ = nonce.partition(".")
        if not issued.isdigit() or time.time() - int(issued) > SIGNIN_S:
            return False
        return hmac.compare_digest(self._mac(nonce).encode(), sent.encode("utf-8", "replace"))

    def _mac(self, nonce: str) -> str:
        return hmac.new(self._key, nonce.encode(), hashlib.sha256).hexdigest()


def set_cookie(response: Response, name: str, value: str, *, path: str, secure: bool, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path=path or "/", secure=secure, httponly=True, samesite="strict")


def clear_cookie(response: Response, name: str, *, path: str, secure: bool) -> None:
    response.delete_cookie(name, path=path or "/", secure=secure, httponly=True, samesite="strict")
