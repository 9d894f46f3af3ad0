"""Token buckets in the database, so every replica spends from one limit per caller.

A grant locks the caller's row (not the database-wide write lock: a rate check must never wait
for curation), refills it for the time since it was last touched, and takes what it can of
what was asked, at least one call or nothing. The replica spends a grant locally
(ratelimit.SharedRateLimiter), so the database sees one round trip per grant, not per request.
"""

from __future__ import annotations

import math

from psycopg import Connection


def grant(conn: Connection, key: str, want: int, rate_per_s: float, burst: float, now: float) -> tuple[int, float]:
    """(calls granted, 0) or (0, seconds until one call is in the bucket)."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO rate_buckets (key, level, updated_at) VALUES (%s, %s, %s) ON CONFLICT (key) DO NOTHING",
            (key, burst, now),
        )
        row = conn.execute("SELECT level, updated_at FROM rate_buckets WHERE key = %s FOR UPDATE", (key,)).fetchone()
        assert row is not None  # inserted above, or there before
        level = min(burst, row[0] + max(0.0, now - row[1]) * rate_per_s)
        granted = min(want, math.floor(level))
        conn.execute(
            "UPDATE rate_buckets SET level = %s, updated_at = %s WHERE key = %s",
            (level - granted, max(now, row[1]), key),
        )
    if granted >= 1:
        return granted, 0.0
    return 0, (1.0 - level) / rate_per_s
