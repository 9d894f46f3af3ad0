"""The store: everything that holds memwal-mcp's data, behind one contract (contract.py).

Backends live in subpackages: `sqlite/` (one file, the default) and `postgres/` (a server,
selected by a database URL); `open_store` picks one from the settings. Each is imported only
when chosen, so the SQLite path never loads a PostgreSQL driver. Nothing outside this package
imports a database driver or holds SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .contract import Store, StoreReader, StoreWriter, TextMatch, VectorMatch, VectorSearch

if TYPE_CHECKING:
    from ..config import Settings
    from .sqlite.health import StoreHealth


def open_store(settings: Settings) -> Store:
    """The backend the configuration names (not opened yet: `await store.open()`): PostgreSQL
    when a database URL is set (MEMWAL_DB_URL, --db-url, [storage] url), else the SQLite file
    at `db_path` (MEMWAL_DB_PATH)."""
    url = settings.database_url
    if url is not None:
        from .postgres.backend import PostgresStore

        return PostgresStore(
            url, hnsw_min_rows=settings.storage.hnsw_min_rows, lock_wait_s=settings.storage.lock_wait_s
        )
    from .sqlite.backend import SQLiteStore

    return SQLiteStore(settings.db_path)


def open_read_only(path: Path) -> Store:
    """The SQLite file at `path` for reading only (a migration's source; not opened yet): its
    bytes stay as they are, and a file of another schema version is refused at open."""
    from .sqlite.backend import SQLiteStore

    return SQLiteStore(path, read_only=True)


def probe_store(settings: Settings) -> StoreHealth:
    """What doctor reports about the engine and the data, without creating anything."""
    url = settings.database_url
    if url is not None:
        from .postgres.health import probe as probe_postgres

        return probe_postgres(url, settings.storage.hnsw_min_rows)
    from .sqlite.health import probe

    return probe(settings.db_path)


__all__ = [
    "probe_store",
    "Store",
    "StoreReader",
    "StoreWriter",
    "TextMatch",
    "VectorMatch",
    "VectorSearch",
    "open_read_only",
    "open_store",
]
