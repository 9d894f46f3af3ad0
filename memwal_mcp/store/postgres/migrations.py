"""Numbered .sql migrations for PostgreSQL, each applied once, in order, in its own transaction.

Each runs under a transaction-level advisory lock and records itself in the same transaction,
so replicas starting at once apply it once: the others wait for the lock, then see it recorded.
A crash mid-migration leaves the database at the previous version. Shipped migrations are
never edited.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path

from psycopg import Connection

from ...errors import StoreUnavailable
from .connection import MIGRATION_LOCK

_NAME = re.compile(r"^(\d+)_[\w-]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations_dir() -> Path:
    """Inside the wheel they live in the package; in a checkout, at the top level."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "migrations" / "postgres", package.parent / "migrations" / "postgres"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("memwal-mcp's PostgreSQL migrations folder is missing from this installation")


def load_migrations(folder: Path | None = None) -> list[Migration]:
    folder = folder or migrations_dir()
    found = [
        Migration(int(match.group(1)), path.stem, path.read_text(encoding="utf-8"))
        for path in folder.iterdir()
        if (match := _NAME.match(path.name))
    ]
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"two migrations share a number in {folder}")
    return found


def applied(conn: Connection) -> list[tuple[int, str]]:
    """(version, name) the database records, oldest first; [] before the first."""
    if conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone() != (True,):
        return []
    return [(int(v), n) for v, n in conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")]


@functools.cache
def shipped_version() -> int:
    """The newest migration this version ships."""
    return max((m.version for m in load_migrations()), default=0)


def upgraded_since(conn: Connection) -> bool:
    """Whether a newer memwal-mcp has migrated the database since this process opened it (a
    replica left running through a rolling upgrade): its writes would be to tables that changed."""
    found = conn.execute("SELECT COALESCE(max(version), 0) FROM schema_migrations").fetchone()
    return found is not None and int(found[0]) > shipped_version()


def _refuse_newer(conn: Connection, known: list[Migration]) -> None:
    """A database a newer memwal-mcp has migrated is not this version's to use: its code would
    read and write tables that are gone or changed (and fail the jobs it curates)."""
    newest = max((m.version for m in known), default=0)
    found = [(int(v), n) for v, n in applied(conn) if int(v) > newest]
    if found:
        raise StoreUnavailable(
            f"this database was upgraded by a newer memwal-mcp (migration {found[-1][1]}); this version knows "
            f"migrations up to {newest}: run the newer memwal-mcp on it"
        )


def apply_migrations(conn: Connection, folder: Path | None = None) -> list[str]:
    """Apply what is new; returns the names applied. Safe to race from several processes."""
    done: list[str] = []
    migrations = load_migrations(folder)
    _refuse_newer(conn, migrations)
    for migration in migrations:
        with conn.transaction():
            conn.execute(MIGRATION_LOCK)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL, applied_at double precision NOT NULL)"
            )
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)).fetchone():
                continue
            conn.execute(migration.sql.encode("utf-8"))
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (migration.version, migration.name, time.time()),
            )
        done.append(migration.name)
    return done
