"""Fixtures for the PostgreSQL backend's own tests: an empty database on the shared server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from memwal_mcp.store.postgres.backend import PostgresStore

from .server import PostgresServer, shared


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    return shared()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    """An empty database with the schema migrated (or not yet), for this test alone."""
    url = postgres_server.take()
    yield url
    postgres_server.give_back(url)


@pytest.fixture
async def pg_store(pg_url: str) -> AsyncIterator[PostgresStore]:
    store = PostgresStore(pg_url)
    await store.open()
    yield store
    await store.close()
