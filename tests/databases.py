"""The database a test's `memwal-mcp` processes share, read directly by the test: a SQLite file or a
PostgreSQL database, behind the same three calls.

A test states what must be stored in plain SQL with `?` placeholders; both backends name their tables
and columns alike (migrations/sqlite, migrations/postgres), so one query checks either. What differs
(`rowid` against `pk`, `PRAGMA`s) has no place in a test that runs on both.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg

from memwal_mcp.store.postgres.connection import redacted
from memwal_mcp.store.sqlite.connection import connect


def copy_closed_sqlite(db: Path, folder: Path) -> Path:
    """A copy of a SQLite database no process has open, in `folder`: the file and its WAL (SQLite
    rebuilds the WAL index on the first open). A module's tests each take a copy of one store
    the CLI made once, instead of each making it again a process at a time."""
    for name in (db.name, f"{db.name}-wal"):
        if (db.parent / name).exists():
            shutil.copyfile(db.parent / name, folder / name)
    return folder / db.name


class Database:
    """Where the servers of one test keep their memories."""

    backend: str
    shown_as: str  # how `memwal-mcp stats` names it

    def env(self) -> dict[str, str]:
        """The variables that point a `memwal-mcp` process at this database."""
        raise NotImplementedError

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """The one value a query answers."""
        rows = self.rows(sql, params)
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        return rows[0][0]


class SqliteDatabase(Database):
    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.shown_as = str(path)

    def env(self) -> dict[str, str]:
        return {"MEMWAL_DB_PATH": str(self.path)}

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = connect(self.path)
        try:
            return [tuple(row) for row in conn.execute(sql, params).fetchall()]
        finally:
            conn.close()


class PostgresDatabase(Database):
    backend = "postgres"

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown_as = redacted(url)

    def env(self) -> dict[str, str]:
        return {"MEMWAL_DB_URL": self.url}

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        # sqlite3's `?` placeholders as psycopg's `%s` (the tests' queries hold no literal `?`).
        query = sql.replace("%", "%%").replace("?", "%s")
        with psycopg.connect(self.url, autocommit=True) as conn:
            return [tuple(row) for row in conn.execute(query, params).fetchall()]
