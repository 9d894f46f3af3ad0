"""A token bucket per caller: `burst` requests at once, then `rate_per_minute`.

RateLimiter keeps the buckets in this process. SharedRateLimiter keeps them in the store when
the store is shared by several replicas (PostgreSQL), so a token's limit is one limit however
many replicas a balancer spreads its requests over, not one per replica.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

# A replica takes allowance from the store's bucket in grants of at most burst / GRANT_SHARE calls
# and spends them locally: one round trip per grant. What replicas hold unspent is what the shared
# limit can be overrun by, at most (replicas x grant) calls; a tenth of the burst keeps that small.
GRANT_SHARE = 10
_MAX_KEYS = 100_000

Grant = Callable[[str, int, float, float, float], Awaitable["tuple[int, float] | None"]]


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(self, rate_per_minute: int, burst: int) -> None:
        self._rate = rate_per_minute / 60.0
        self._burst = float(burst)
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str) -> float:
        """Spend one call; returns 0 when allowed, else the seconds to wait before retrying."""
        now = time.monotonic()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) > _MAX_KEYS:
                self._buckets.clear()
            bucket = self._buckets[key] = _Bucket(self._burst, now)
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated) * self._rate)
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self._rate


class SharedRateLimiter:
    """RateLimiter's buckets kept by the store (`Store.rate_grant`), spent here in small grants.

    A store that keeps no buckets (SQLite: one machine's servers, each with its own limits) says so
    on the first grant, and from then on the buckets are this process's. A store that cannot answer
    (database down) does not turn every request away for that: the call is counted locally instead.
    """

    def __init__(self, grant: Grant, rate_per_minute: int, burst: int) -> None:
        self._grant = grant
        self._rate = rate_per_minute / 60.0
        self._burst = float(burst)
        self._chunk = max(1, burst // GRANT_SHARE)
        self._held: dict[str, int] = {}
        self._local = RateLimiter(rate_per_minute, burst)
        self._shared = True

    async def take(self, key: str) -> float:
        """Spend one call; returns 0 when allowed, else the seconds to wait before retrying."""
        if not self._shared:
            return self._local.take(key)
        held = self._held.get(key, 0)
        if held > 0:
            self._held[key] = held - 1
            return 0.0
        try:
            got = await self._grant(key, self._chunk, self._rate, self._burst, time.time())
        except Exception as exc:  # the store is unreachable: the request fails there, or not, on its own
            log.warning("shared rate limit unavailable (%s); counting this call locally", type(exc).__name__)
            return self._local.take(key)
        if got is None:
            self._shared = False
            return self._local.take(key)
        granted, wait = got
        if granted < 1:
            return wait
        if len(self._held) > _MAX_KEYS:
            self._held.clear()
        self._held[key] = granted - 1
        return 0.0
