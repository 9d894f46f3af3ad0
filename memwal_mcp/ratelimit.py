"""A token bucket per caller: `burst` requests at once, then `rate_per_minute`."""

from __future__ import annotations

import time
from dataclasses import dataclass


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
            if len(self._buckets) > 100_000:
                self._buckets.clear()
            bucket = self._buckets[key] = _Bucket(self._burst, now)
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated) * self._rate)
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self._rate
