"""Numbered .sql migrations, each applied once, in order, in its own transaction.

The file and the row recording it commit together, so a crash mid-migration
leaves the database at the previous version. Shipped migrations are never edited.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import StoreUnavailable
from . import fts

_NAME = re.compile(r"^(\d+)_[\w-]+\.sql$")
# Steps SQL cannot express (tables named per row), run after a migration's script in
# its transaction. Each must work on the schema as that migration leaves it.
# (008 made per-owner tables here; 011 replaces them by per-lane ones, so a database older
# than 008 goes straight to those.)
_AFTER: dict[int, Callable[[sqlite3.Connection], object]] = {11: fts.move_to_lanes}


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations_dir() -> Path:
    """Inside the wheel they live in the package; in a checkout, at the top level."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "migrations" / "sqlite", package.parent / "migrations" / "sqlite"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("memwal-mcp's migrations folder is missing from this installation")


def load_migrations(folder: Path | None = None) -> list[Migration]:
    folder = folder or migrations_dir()
    found: list[Migration] = []
    for path in folder.iterdir():
        match = _NAME.match(path.name)
        if match:
            found.append(Migration(int(match.group(1)), path.stem, path.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"two migrations share a number in {folder}")
    return found


@functools.cache
def shipped_version() -> int:
    """The newest migration this version ships."""
    return max((m.version for m in load_migrations()), default=0)


def upgraded_since(conn: sqlite3.Connection) -> bool:
    """Whether a newer memwal-mcp has migrated the file since this process opened it (a server
    left running through an upgrade): its writes would be to tables that changed."""
    (newest,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return bool(newest > shipped_version())


def _split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (executescript would commit on its own)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer)
            buffer = ""
    if buffer.strip() and not all(l.strip().startswith("--") or not l.strip() for l in buffer.splitlines()):
        raise ValueError(f"incomplete SQL statement at the end of a migration: {buffer[:80]!r}")
    return statements


def apply_migrations(conn: sqlite3.Connection, folder: Path | None = None) -> list[str]:
    """Apply what is new; returns the names applied. Safe to race from several processes."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
    )
    migrations = load_migrations(folder)
    _refuse_newer(conn, migrations)
    # Read first: a file that is up to date needs no write lock, so opening it does not wait for
    # another connection's write transaction (a reader in WAL never does).
    present = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    applied: list[str] = []
    for migration in [m for m in migrations if m.version not in present]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)).fetchone()
            if done:
                conn.execute("COMMIT")
                continue
            for statement in _split_statements(migration.sql):
                conn.execute(statement)
            if migration.version in _AFTER:
                _AFTER[migration.version](conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied


def require_current(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file whose schema is not exactly this version's, without changing it: the
    check a read-only open makes in place of migrating."""
    try:
        rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    except Exception as exc:  # no such table, or not a database at all (the driver module varies)
        raise StoreUnavailable(f"{path} is not a memwal-mcp database ({exc})") from None
    known = load_migrations()
    _refuse_newer(conn, known)
    missing = sorted({m.version for m in known} - {int(version) for version, _ in rows})
    if missing:
        have = max((int(version) for version, _ in rows), default=0)
        raise StoreUnavailable(
            f"{path} has an older schema (version {have}; this memwal-mcp's is {max(m.version for m in known)}), and"
            f" it is opened read-only here: upgrade it first by running this memwal-mcp on it once"
            f" (`memwal-mcp check --db {path}`), then try again"
        )


def _refuse_newer(conn: sqlite3.Connection, known: list[Migration]) -> None:
    """A file a newer memwal-mcp has migrated is not this version's to use: its code would
    read and write tables that are gone or changed (and fail the jobs it curates)."""
    newest = max((m.version for m in known), default=0)
    row = conn.execute(
        "SELECT version, name FROM schema_migrations WHERE version > ? ORDER BY version DESC LIMIT 1", (newest,)
    ).fetchone()
    if row is not None:
        raise StoreUnavailable(
            f"this database was upgraded by a newer memwal-mcp (migration {row[1]}); this version knows migrations "
            f"up to {newest}: run the newer memwal-mcp on it"
        )
