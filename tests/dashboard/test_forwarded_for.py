"""The per-address sign-in limit is keyed on an address a client cannot choose: X-Forwarded-For
counts only from the proxies in [server] forwarded_allow_ips. uvicorn's own default believes it
from 127.0.0.1, which let a loopback client name a new address per guess and never be limited
(issue 21). Real `memwal-mcp serve --transport http` subprocesses, real HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.e2e.conftest import base_env
from tests.e2e.http_helpers import make_token, serve

LIMIT = 2


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = base_env(
        tmp_path, tmp_path / "memwal.db", MEMWAL_AUTH__SIGNIN_PER_MINUTE=str(LIMIT), MEMWAL_LOG_LEVEL="WARNING", **extra
    )
    make_token(env, "alice")  # a server with a token: the dashboard asks for one
    return env


def _attempts(base: str, forwarded_for: list[str]) -> list[int]:
    """One wrong-token sign-in per address named; each is counted, nonce or not."""
    statuses = []
    with httpx.Client(base_url=base + "/ui", timeout=30) as client:
        for address in forwarded_for:
            headers = {"Origin": base, "X-Forwarded-For": address}
            form = {"token": "mwk_a-guess", "signin": "no-nonce"}
            statuses.append(client.post("/signin", data=form, headers=headers).status_code)
    return statuses


def test_a_forged_forwarded_for_per_attempt_is_still_limited_without_trusted_proxies(tmp_path: Path) -> None:
    with serve(_env(tmp_path), tmp_path) as served:
        statuses = _attempts(served.base, [f"203.0.113.{n}" for n in range(LIMIT + 3)])
    assert 429 not in statuses[:LIMIT], statuses
    assert statuses[LIMIT:] == [429] * 3, statuses


def test_behind_a_configured_proxy_its_forwarded_for_is_the_client_address(tmp_path: Path) -> None:
    env = _env(tmp_path, MEMWAL_SERVER__FORWARDED_ALLOW_IPS='["127.0.0.1"]')
    with serve(env, tmp_path) as served:
        spread = _attempts(served.base, [f"203.0.113.{n}" for n in range(LIMIT + 3)])
        one = _attempts(served.base, ["198.51.100.7"] * (LIMIT + 1))
    assert 429 not in spread, spread  # each forwarded address its own bucket
    assert one[LIMIT] == 429, one
