"""SQLiteStore: the contract's async face over one SQLite file (see store/contract.py).

A writer and a reader connection, each on its own thread (store/sqlite/database.py); units of
work run there against a SQLiteReader / SQLiteWriter view.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import anyio

from ..contract import StoreReader, StoreWriter
from ..records import BackupResult
from .backup import backup_database
from .connection import kept_copies, kept_copies_rerun
from .database import Database
from .row_cache import RowCache
from .views import SQLiteReader, SQLiteWriter

T = TypeVar("T")
P = ParamSpec("P")


class SQLiteStore:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.db = Database(path, read_only=read_only)
        self._rows = RowCache()

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def location(self) -> str:
        return str(self.db.path)

    def own_files(self) -> tuple[Path, ...]:
        return (self.db.path,)

    async def open(self) -> None:
        await self.db.open()

    async def close(self) -> None:
        await self.db.close()

    async def read(self, fn: Callable[Concatenate[StoreReader, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        def run(conn: sqlite3.Connection) -> T:
            return fn(SQLiteReader(conn, self._rows), *args, **kwargs)

        return await self.db.read(run)

    async def write(self, fn: Callable[Concatenate[StoreWriter, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        def run(conn: sqlite3.Connection) -> T:
            return fn(SQLiteWriter(conn), *args, **kwargs)

        try:
            return await self.db.write(run)
        finally:  # whatever it changed (a forget's text included) is not served from the rows kept
            self._rows.invalidate()

    async def rate_grant(
        self, key: str, want: int, rate_per_s: float, burst: float, now: float
    ) -> tuple[int, float] | None:
        return None  # one machine's file: each server process keeps its own limits (ratelimit.RateLimiter)

    async def ping(self, timeout_s: float) -> None:
        # A file on this machine: its reader answers or the process has bigger trouble; bounded anyway.
        with anyio.fail_after(timeout_s):
            await self.read(lambda reader: reader.vector_model())

    @property
    def erasure_pending(self) -> bool:
        return self.db.wal_owed

    def owe_erasure(self) -> None:
        self.db.owe_wal_truncation()

    @property
    def erasure_kept(self) -> str:
        return kept_copies(self.db.path)

    def erasure_rerun(self, command: str) -> str:
        return kept_copies_rerun(self.db.path, command)

    def erasure_left(self, cleared: bool, already: bool) -> str | None:
        return None  # secure_delete overwrote the rows' pages, and the emptied log holds no frame

    async def backup(self, target: Path, *, force: bool, verify: bool) -> BackupResult:
        return await anyio.to_thread.run_sync(lambda: backup_database(self.db.path, target, force=force, verify=verify))

    async def settle_erasure(self, wait_ms: int) -> bool:
        return await self.db.settle_wal(wait_ms)
