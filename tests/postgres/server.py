"""One real PostgreSQL (pgserver, from PyPI: PostgreSQL 16 with pgvector) per test process, and
empty databases on it, each used by one test at a time.

Shared by the store contract suite and tests/postgres. The server lives in a temp folder of its
own, not under pytest's basetemp: a test session in another checkout on this machine prunes old
basetemp folders and would delete the data of a server still running. It stops, and its folder
goes, when the process exits. A server that cannot start raises: the tests fail, never skip.
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
import warnings
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

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
    -- NULL when no store ever opened the database (a test whose command was refused first)
    name := (SELECT 'TRUNCATE ' || string_agg(format('%I', tablename), ', ') || ' RESTART IDENTITY CASCADE'
             FROM pg_tables WHERE schemaname = 'public' AND tablename != 'schema_migrations');
    IF name IS NOT NULL THEN
        EXECUTE name;
    END IF;
END
$$;
"""


def database_url(server_url: str, name: str) -> str:
    """The server's URL with another database name (pgserver's URL reaches it by socket)."""
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


class PostgresServer:
    def __init__(self, folder: Path) -> None:
        import pgserver

        with warnings.catch_warnings():  # platformdirs, on where to put the socket without XDG_RUNTIME_DIR
            warnings.simplefilter("ignore")
            self.server = pgserver.get_server(folder, cleanup_mode="stop")
        self.url = self.server.get_uri()
        # A throwaway server: durability buys nothing, and commits are most of the suite's time.
        with psycopg.connect(self.url, autocommit=True) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")
        self._names = itertools.count()
        self._free: list[str] = []

    def new_database(self) -> str:
        """The URL of a new, empty database (no schema: the store's first open migrates it)."""
        name = f"memwal_test_{next(self._names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return database_url(self.url, name)

    def take(self) -> str:
        """An empty database for one test: a recycled one (its schema migrated), or a new one."""
        return self._free.pop() if self._free else self.new_database()

    def give_back(self, url: str) -> None:
        """Empty it again (after its stores closed) for the next test.

        A `memwal-mcp` process the test SIGKILLed may leave a session the server has not yet
        reaped, holding locks the TRUNCATE would wait for: every other session on the database
        is ended first."""
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid != pg_backend_pid()"
            )
            conn.execute(_RESET)
        self._free.append(url)


_shared: PostgresServer | None = None


def shared() -> PostgresServer:
    """The process's server, started on first use."""
    global _shared
    if _shared is None:
        folder = Path(tempfile.mkdtemp(prefix="memwal-pgserver-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # runs after pgserver's stop (LIFO)
        _shared = PostgresServer(folder / "data")
    return _shared
