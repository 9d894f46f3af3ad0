"""Sign-in attempts are limited per client address and for the whole server ([auth]
signin_per_minute, signin_per_minute_total), and a signed-in token's pages by the token's [auth]
rate. On PostgreSQL the replicas behind one balancer share the buckets (in the database); on
SQLite each process keeps its own. Two dashboards over one
database stand for two replicas, each its own MemoryService, driven over ASGI as a browser's
form posts would reach them (the browser test of the refusal is in test_browser.py)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from memwal_mcp.config import load_settings
from memwal_mcp.dashboard import build_dashboard
from memwal_mcp.service import MemoryService
from memwal_mcp.tokens import TokenRegistry, hash_token, new_token

from ..postgres.server import PostgresServer, shared

TOTAL = 4


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, object]]:
    if request.param == "sqlite":
        yield {"db_path": tmp_path / "memwal.db"}
        return
    server: PostgresServer = shared()
    url = server.take()
    yield {"db_url": url}
    server.give_back(url)


@asynccontextmanager
async def _replicas(where: dict[str, object], count: int, **limits: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    auth = {"signin_per_minute": 100, "signin_per_minute_total": TOTAL, **limits}
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(count):
            service = MemoryService(load_settings(**where, owner="local", auth=auth))
            await stack.enter_async_context(service.running(worker=False))
            registry = TokenRegistry(service.settings.auth, service.store)
            dashboard = build_dashboard(service, registry, owner="local", grant=service.store.rate_grant)
            app = Starlette(routes=[Mount("/ui", app=dashboard)])
            client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")
            clients.append(await stack.enter_async_context(client))
        yield clients


async def _attempt(client: httpx.AsyncClient) -> httpx.Response:
    form = {"token": "mwk_a-guess", "signin": "no-nonce"}
    return await client.post("/ui/signin", data=form, headers={"Origin": "http://127.0.0.1"})


async def test_sign_ins_over_the_total_are_refused_with_one_line_and_429(database: dict[str, object]) -> None:
    async with _replicas(database, 2) as (first, second):
        statuses = []
        for n in range(TOTAL):
            statuses.append((await _attempt(first if n % 2 == 0 else second)).status_code)
        assert 429 not in statuses  # refused for the missing nonce, but counted
        refused = await _attempt(first)
        shared_buckets = "db_url" in database
        if shared_buckets:  # the two replicas spent from one bucket
            assert refused.status_code == 429
            assert "Too many sign-in attempts on this server: retry after" in refused.text
            assert int(refused.headers["Retry-After"]) >= 1
            assert (await _attempt(second)).status_code == 429
        else:  # each process its own: the first has spent half
            assert refused.status_code != 429
            for _ in range(TOTAL // 2 - 1):
                await _attempt(first)
            assert (await _attempt(first)).status_code == 429


async def _signed_in(client: httpx.AsyncClient, token: str) -> None:
    form = await client.get("/ui/signin")
    nonce = re.search(r'name="signin" value="([^"]+)"', form.text)
    assert nonce is not None, form.text[:300]
    answer = await client.post(
        "/ui/signin", data={"token": token, "signin": nonce.group(1)}, headers={"Origin": "http://127.0.0.1"}
    )
    assert answer.status_code == 303 and answer.headers["location"].endswith("/ui/search"), answer.text[:300]


async def test_a_tokens_pages_on_two_replicas_spend_one_limit(database: dict[str, object]) -> None:
    burst = 6
    async with _replicas(database, 2, rate_per_minute=1, burst=burst) as clients:
        token = new_token()
        setup = MemoryService(load_settings(**database, owner="local"))
        async with setup.running(worker=False):
            await setup.store.write(lambda writer: writer.insert_token(hash_token(token), "alice", ("read",), None))
        for client in clients:  # the same token signed in on each replica (a browser on each)
            await _signed_in(client, token)
        statuses = [(await clients[n % 2].get("/ui/memories")).status_code for n in range(2 * burst)]
    refused = [status for status in statuses if status == 429]
    assert set(statuses) <= {200, 429}, statuses
    if "db_url" in database:  # one bucket for the token, wherever its pages are served
        assert statuses.count(200) == burst, statuses
        assert statuses[-1] == 429, statuses
    else:  # each process its own bucket
        assert refused == [], statuses
