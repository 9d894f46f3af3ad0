"""The store contract suite runs every test module here against every backend.

The only backend-specific code of the suite is in this file: how to open a fresh, empty
store of each backend. A new backend adds its name to BACKENDS and a branch to `_open`;
the tests run on it unchanged.

PostgreSQL comes from PyPI (pgserver: a real server with pgvector, started in a temp dir once
per session, stopped at exit). Each test gets an empty database of its own: one the store
migrated when it was first used, emptied again after each test that had it. A server that
cannot start fails the tests: it is never skipped.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.store import Store, open_store

BACKENDS = ["sqlite", "postgres"]

# Tests that state what the contract documents but a backend does not do yet, by backend and
# test name. Each runs as a strict xfail: the day the backend is fixed it fails, and its entry
# goes. Anything listed here is a known defect of that backend, not an allowance.
KNOWN_VIOLATIONS: dict[str, dict[str, str]] = {"sqlite": {}, "postgres": {}}


def database_url(server_url: str, name: str) -> str:
    """The server's URL with another database name (pgserver's URL reaches it by socket)."""
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


# A database back to the state a fresh one has: no rows, keys from 1, no vector tables (they
# come with the first model). Truncating takes ~30 ms where CREATE DATABASE ... TEMPLATE took
# 0.4-1.5 s and DROP DATABASE 0.05-1.9 s here (2 busy cores), so databases are recycled.
_RESET = """
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'memory\\_vectors%' LOOP
        EXECUTE format('DROP TABLE %I', name);
    END LOOP;
    EXECUTE (SELECT 'TRUNCATE ' || string_agg(format('%I', tablename), ', ') || ' RESTART IDENTITY CASCADE'
             FROM pg_tables WHERE schemaname = 'public' AND tablename != 'schema_migrations');
END
$$;
"""


class PostgresServer:
    """One pgserver for the session, and empty databases on it, each used by one test at a time."""

    def __init__(self, folder: Path) -> None:
        import pgserver
        import psycopg

        self._psycopg = psycopg
        self.server = pgserver.get_server(folder, cleanup_mode="stop")
        self.url = self.server.get_uri()
        # A throwaway server: durability buys nothing, and commits are most of the suite's time.
        with self._connect(self.url) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")
        self._names = itertools.count()
        self._free: list[str] = []

    def _connect(self, url: str):  # type: ignore[no-untyped-def]
        return self._psycopg.connect(url, autocommit=True)

    def take(self) -> str:
        """The URL of an empty database holding the migrated schema, for this test alone."""
        if self._free:
            return self._free.pop()
        name = f"memwal_test_{next(self._names)}"
        with self._connect(self.url) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return database_url(self.url, name)

    def give_back(self, url: str) -> None:
        """Empty it again (after its store closed) for the next test."""
        with self._connect(url) as conn:
            conn.execute(_RESET)
        self._free.append(url)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Not under pytest's basetemp: a test session in another checkout on this machine prunes
    old basetemp folders, and would delete the data of a server still running."""
    folder = Path(tempfile.mkdtemp(prefix="memwal-pgserver-"))
    server = PostgresServer(folder / "data")
    yield server
    server.server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


async def _open(backend: str, folder: Path, request: pytest.FixtureRequest) -> tuple[Store, Callable[[], None]]:
    """A fresh, empty, opened store of this backend, and what to do once it is closed; nothing
    else in the suite knows backends."""
    done: Callable[[], None] = lambda: None  # noqa: E731
    if backend == "sqlite":
        folder.mkdir(parents=True)
        store = open_store(load_settings(db_path=folder / "memwal.db"))
    elif backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.take()
        store = open_store(load_settings(db_url=url))  # migrates a new database
        done = lambda: server.give_back(url)  # noqa: E731
    else:
        raise AssertionError(f"no fixture for backend {backend!r}")
    await store.open()
    return store, done


_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE not in item.path.parents:
            continue
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        reason = KNOWN_VIOLATIONS.get(str(backend), {}).get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"{backend}: {reason}"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[[], Awaitable[Store]]]:
    """Opens another fresh store of the same backend on each call (an import needs two); all
    are closed after the test."""
    opened: list[tuple[Store, Callable[[], None]]] = []

    async def make() -> Store:
        store, done = await _open(backend, tmp_path / f"store-{len(opened)}", request)
        opened.append((store, done))
        return store

    yield make
    for store, done in reversed(opened):
        await store.close()
        done()


@pytest.fixture
async def store(make_store: Callable[[], Awaitable[Store]]) -> Store:
    """An opened store on a fresh database, closed after the test."""
    return await make_store()
