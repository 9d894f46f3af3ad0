"""One rate limit per token across replicas: the buckets live in PostgreSQL (store/postgres/rates.py)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import httpx2
import pytest

from memwal_mcp.ratelimit import SharedRateLimiter
from memwal_mcp.store.postgres.backend import PostgresStore
from memwal_mcp.store.sqlite.backend import SQLiteStore
from tests.e2e.conftest import base_env
from tests.e2e.http_helpers import INITIALIZE, JSON_AND_SSE, bearer, make_token, serve


async def test_a_grant_takes_what_the_bucket_holds_and_says_how_long_to_wait(pg_store: PostgresStore) -> None:
    now = 1_000.0
    assert await pg_store.rate_grant("k", 2, 0.5, 5.0, now) == (2, 0.0)
    assert await pg_store.rate_grant("k", 2, 0.5, 5.0, now) == (2, 0.0)
    assert await pg_store.rate_grant("k", 2, 0.5, 5.0, now) == (1, 0.0)
    granted, wait = await pg_store.rate_grant("k", 2, 0.5, 5.0, now)
    assert granted == 0 and wait == pytest.approx(2.0)  # one call refills in 1 / 0.5 s
    assert await pg_store.rate_grant("k", 2, 0.5, 5.0, now + 2.0) == (1, 0.0)
    assert await pg_store.rate_grant("other", 9, 0.5, 5.0, now) == (5, 0.0)  # a bucket per key, burst-capped
    assert await pg_store.rate_grant("k", 9, 0.5, 5.0, now + 1_000.0) == (5, 0.0)  # refilled to the burst, no more


async def test_two_replicas_limiters_share_one_bucket(pg_url: str) -> None:
    stores = [PostgresStore(pg_url), PostgresStore(pg_url)]
    for store in stores:
        await store.open()
    try:
        burst = 20
        limiters = [SharedRateLimiter(store.rate_grant, 60, burst) for store in stores]  # 1 call/s refill
        started = time.monotonic()
        allowed = 0
        for n in range(4 * burst):
            allowed += await limiters[n % 2].take("token-hash") == 0.0
        refilled = time.monotonic() - started + 1
        # Alone, each would have allowed `burst`; together they spend one bucket (what a replica holds
        # unspent, a grant of burst/10 at most, is the only slack).
        assert burst - 2 * (burst // 10) <= allowed <= burst + refilled, allowed
    finally:
        for store in stores:
            await store.close()


async def test_sqlite_keeps_limits_in_each_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    await store.open()
    try:
        assert await store.rate_grant("k", 2, 1.0, 5.0, 0.0) is None
        limiter = SharedRateLimiter(store.rate_grant, 60, 3)
        assert [await limiter.take("k") == 0.0 for _ in range(4)] == [True, True, True, False]
    finally:
        await store.close()


@pytest.mark.slow
def test_a_token_limited_on_two_replicas_gets_one_limit_not_two(pg_url: str, tmp_path: Path) -> None:
    env = base_env(
        tmp_path, tmp_path / "unused.db", MEMWAL_DB_URL=pg_url, MEMWAL_AUTH__RATE_PER_MINUTE="1", MEMWAL_AUTH__BURST="6"
    )
    token = make_token(env, "alice")

    async def spread(urls: list[str]) -> list[int]:
        async with httpx2.AsyncClient(timeout=30) as client:
            codes = []
            for n in range(12):
                answer = await client.post(urls[n % 2], json=INITIALIZE, headers={**JSON_AND_SSE, **bearer(token)})
                codes.append(answer.status_code)
            return codes

    with (
        serve(env, tmp_path, name="a", extra=("--stateless",)) as a,
        serve(env, tmp_path, name="b", extra=("--stateless",)) as b,
    ):
        codes = anyio.run(spread, [a.mcp, b.mcp])
    assert codes.count(200) == 6, codes  # the burst, once, for both replicas together
    assert codes.count(429) == 6, codes
