"""The store: everything that holds memwal-mcp's data, behind one contract (contract.py).

Backends live in subpackages (`sqlite/` today); `open_store` picks one from the settings.
Nothing outside this package imports a database driver or holds SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import Store, StoreReader, StoreWriter, TextMatch, VectorMatch, VectorSearch

if TYPE_CHECKING:
    from ..config import Settings
    from .sqlite.health import StoreHealth


def open_store(settings: Settings) -> Store:
    """The backend the configuration names (not opened yet: `await store.open()`). Today the
    SQLite file at `db_path` (MEMWAL_DB_PATH); a database URL selects a server backend."""
    from .sqlite.backend import SQLiteStore

    return SQLiteStore(settings.db_path)


def probe_store(settings: Settings) -> StoreHealth:
    """What doctor reports about the engine and the data, without creating anything."""
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
    "open_store",
]
