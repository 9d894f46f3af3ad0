"""Bearer tokens: make them, hash them, resolve them to a principal (owner + scopes).

Only hashes are kept (config or the database); a token is shown once, when made.
Lookups are cached briefly so a busy HTTP server does not read the database for
every request, and a revoked token stops working within that time.

Whether an HTTP server needs a token at all is decided by the tokens that exist now,
not by those that existed when it started: `memwal-mcp token create` on a running
open server secures it within the cache time. The change only goes that way: a server
that has seen a token stays secured until it restarts, so revoking the last token
locks everyone out instead of opening the memories to anyone who can reach the port.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass

from .config import AuthSettings
from .errors import InvalidInput
from .store import Store

log = logging.getLogger(__name__)

SCOPES = ("read", "write")
TOKEN_PREFIX = "mwk_"
_CACHE_S = 5.0


@dataclass(frozen=True, slots=True)
class Principal:
    owner: str
    scopes: frozenset[str]
    token_hash: str | None  # None: the configured owner of a stdio or unauthenticated server


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_scopes(text: str) -> tuple[str, ...]:
    scopes = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise InvalidInput(f"scopes must be a comma-separated list of {', '.join(SCOPES)}; got {text!r}")
    return scopes


HASH_PREFIX = "sha256:"
MIN_PREFIX_HEX = 8
_HEX = frozenset("0123456789abcdef")


def parse_hash_prefix(text: str) -> str:
    """A prefix of a token hash, for revoke: `sha256:` (optional) and at least 8 hex digits,
    so a slip such as `revoke s` cannot name every token there is."""
    digits = text.strip().lower().removeprefix(HASH_PREFIX)
    if len(digits) < MIN_PREFIX_HEX or not set(digits) <= _HEX or len(digits) > 64:
        raise InvalidInput(
            f"hash prefix {text!r} is too short or not hex: give '{HASH_PREFIX}' and at least {MIN_PREFIX_HEX} hex "
            "digits of the hash, as `memwal-mcp token list` shows it"
        )
    return HASH_PREFIX + digits


class TokenRegistry:
    def __init__(self, settings: AuthSettings, store: Store) -> None:
        self._configured = {
            t.hash.lower(): Principal(t.owner, frozenset(t.scopes), t.hash.lower()) for t in settings.tokens
        }
        self._store = store
        self._cache: dict[str, tuple[float, Principal | None]] = {}
        self._secured = bool(self._configured)
        self._served_open = False
        self._counted_at = -_CACHE_S

    async def secured(self) -> bool:
        """True once any token exists (config or database), and from then on for the life of the process."""
        if not self._secured:
            now = time.monotonic()
            if now - self._counted_at >= _CACHE_S:
                self._counted_at = now
                if await self._store.read(lambda reader: reader.count_active_tokens()) > 0:
                    self._now_secured()
        if not self._secured:
            self._served_open = True  # so the change, when it comes, is logged
        return self._secured

    def _now_secured(self) -> None:
        if not self._secured:
            self._secured = True
            if self._served_open:
                log.warning(
                    "a bearer token exists now: every request needs a valid one from here on "
                    "(until this server restarts, even if every token is revoked)"
                )

    async def resolve(self, token: str) -> Principal | None:
        return await self.resolve_hash(hash_token(token))

    async def resolve_hash(self, digest: str) -> Principal | None:
        """The principal of the token with this hash, while it is valid: what a session that keeps
        only the hash (the dashboard's) checks on every request, so a revoked token stops it too."""
        for known, principal in self._configured.items():
            if hmac.compare_digest(known, digest):
                return principal
        cached = self._cache.get(digest)
        now = time.monotonic()
        if cached and now - cached[0] < _CACHE_S:
            return cached[1]
        row = await self._store.read(lambda reader: reader.token_by_hash(digest))
        found: Principal | None = (
            Principal(row.owner, frozenset(row.scopes), row.hash) if row and row.revoked_at is None else None
        )
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now, found)
        if found is not None:
            # The count may be cached from before this token was made; a token that works secures the server.
            self._now_secured()
        return found
