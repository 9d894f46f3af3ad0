"""The store: everything that holds memwal-mcp's data, behind one contract (contract.py).

Backends live in subpackages (`sqlite/` today); `open_store` picks one from the settings.
Nothing outside this package imports a database driver or holds SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .contract import Store, StoreReader, StoreWriter, TextMatch, VectorMatch, VectorSearch

if TYPE_CHECKING:
    from .sqlite.health import StoreHealth


def open_store(db_path: Path) -> Store:
    """The backend for this configuration (not opened yet: call `await store.open()`)."""
    from .sqlite.backend import SQLiteStore

    return SQLiteStore(db_path)


def probe_store(db_path: Path) -> StoreHealth:
    """What doctor reports about the engine and the data, without creating anything."""
    from .sqlite.health import probe

    return probe(db_path)


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
