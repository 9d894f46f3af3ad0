"""Bearer tokens: make them, hash them, resolve them to a principal (owner + scopes).

Only hashes are kept (config or the database); a token is shown once, when made.
Lookups are cached briefly so a busy HTTP server does not read the database for
every request, and a revoked token stops working within that time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from .config import AuthSettings
from .errors import InvalidInput
from .store import Database
from .store import tokens as token_store

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


class TokenRegistry:
    def __init__(self, settings: AuthSettings, db: Database) -> None:
        self._configured = {t.hash.lower(): Principal(t.owner, frozenset(t.scopes), t.hash.lower()) for t in settings.tokens}
        self._db = db
        self._cache: dict[str, tuple[float, Principal | None]] = {}

    async def any_configured(self) -> bool:
        return bool(self._configured) or await self._db.read(token_store.count_active) > 0

    async def resolve(self, token: str) -> Principal | None:
        digest = hash_token(token)
        for known, principal in self._configured.items():
            if hmac.compare_digest(known, digest):
                return principal
        cached = self._cache.get(digest)
        now = time.monotonic()
        if cached and now - cached[0] < _CACHE_S:
            return cached[1]
        row = await self._db.read(token_store.token_by_hash, digest)
        found: Principal | None = (
            Principal(row.owner, frozenset(row.scopes), row.hash) if row and row.revoked_at is None else None
        )
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now, found)
        return found
