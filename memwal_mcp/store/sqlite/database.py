"""The async face of the store: one writer and one reader connection, each on its own thread.

Store functions are plain synchronous functions over a sqlite3 connection. `write`
and `read` run one of them on the right connection's thread, so a transaction with
several statements costs one hop off the event loop, and recall never queues
behind the curation worker's writes (WAL lets readers run beside the writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite
import anyio

from ...errors import MemwalError, StoreBusy, StoreUnavailable
from .connection import BUSY_TIMEOUT_MS, connect, is_busy, kept_copies, sqlite_module, truncate_wal
from .migrations import apply_migrations, require_current

log = logging.getLogger(__name__)
T = TypeVar("T")

# Total time a write may spend waiting for other processes before it gives up.
WRITE_DEADLINE_S = 30.0
# While a forget's erased text is still in the write-ahead log, how often to try emptying it:
# soon at first (a reader usually lets go within a moment), then at most every few seconds.
WAL_RETRY_FIRST_S = 0.2
WAL_RETRY_MAX_S = 2.0
# How long close() waits for a reader to let go before leaving the log as it is.
WAL_CLOSE_WAIT_MS = 1000


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE: take the write lock up front, so read-then-write cannot race."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Database:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path).expanduser()
        # Read-only (a migration's source): one reader, no migrations, the file's bytes untouched.
        self.read_only = read_only
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._wal_owed = False  # a forget could not empty the write-ahead log yet
        self._wal_retry: asyncio.Task[None] | None = None

    async def open(self) -> None:
        if self.read_only:
            await self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create the database folder {self.path.parent}: {exc}") from exc
        sqlite_module()  # fail early with the install hint if no usable SQLite exists
        try:
            self._writer = await aiosqlite.Connection(lambda: connect(self.path), iter_chunk_size=64)
            applied = await self.write(apply_migrations)
            if applied:
                log.info("database %s: applied migrations %s", self.path, ", ".join(applied))
            self._reader = await aiosqlite.Connection(lambda: connect(self.path), iter_chunk_size=64)
        except BaseException as exc:
            # A refused or failed open must not leave a connection's thread behind: the process
            # would hang at exit instead of reporting the error.
            await self.close()
            if isinstance(exc, MemwalError) or not isinstance(exc, Exception):
                raise
            if is_busy(exc):  # a new file another connection locked before it was migrated
                raise StoreBusy(
                    f"the database {self.path} stayed locked by another process for "
                    f"{BUSY_TIMEOUT_MS / 1000:.0f}s; try again"
                ) from exc
            # SQLite's own words: "file is not a database", "unable to open database file".
            raise StoreUnavailable(f"cannot open the database {self.path}: {exc}") from exc

    async def _open_read_only(self) -> None:
        """Only a file at this version's schema: an older one would need the migrations that
        a read-only open must not run, a newer one this version cannot read."""
        if not self.path.is_file():
            raise StoreUnavailable(f"there is no database file at {self.path}")
        sqlite_module()
        try:
            self._reader = await aiosqlite.Connection(lambda: connect(self.path, read_only=True), iter_chunk_size=64)
            await self.read(require_current, self.path)
        except BaseException as exc:
            await self.close()
            if isinstance(exc, StoreUnavailable) or not isinstance(exc, Exception):
                raise
            raise StoreUnavailable(f"cannot read {self.path}: {exc}") from exc

    async def close(self) -> None:
        task, self._wal_retry = self._wal_retry, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._wal_owed and self._writer is not None and not await self.settle_wal(WAL_CLOSE_WAIT_MS):
            log.warning(
                "database %s: closing before forgotten text could be checkpointed away: %s (the last "
                "connection to close runs one, or `memwal-mcp forget` of the same id again)",
                self.path,
                kept_copies(self.path),
            )
        for conn in (self._reader, self._writer):
            if conn is not None:
                await conn.close()
        self._reader = self._writer = None

    async def __aenter__(self) -> Database:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @staticmethod
    async def _run(conn: aiosqlite.Connection | None, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        if conn is None:
            raise StoreUnavailable("the database is not open")
        # aiosqlite has no public "run this function on the connection thread";
        # _execute is that, and has been stable across its releases (pinned < 0.23).
        return await conn._execute(lambda: fn(conn._conn, *args))  # noqa: SLF001

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(conn, *args)` on the writer connection."""
        if self.read_only:
            raise StoreUnavailable(f"{self.path} is open read-only here; nothing may be written to it")
        result = await self._retrying(self._writer, fn, args)
        if self._wal_owed:
            await self.settle_wal(0)
        return result

    @property
    def wal_owed(self) -> bool:
        """True while a forget's erased text may still be in the write-ahead log."""
        return self._wal_owed

    def owe_wal_truncation(self) -> None:
        """A forget left erased text in the write-ahead log (a reader held an older snapshot):
        keep trying to empty it on a timer until it is empty -- also while no tool call comes,
        since an idle server would otherwise leave the copy there indefinitely -- as well as
        after each later write and at close."""
        self._wal_owed = True
        if self._wal_retry is None or self._wal_retry.done():
            self._wal_retry = asyncio.get_running_loop().create_task(self._retry_wal(), name="memwal-wal-truncation")

    async def _retry_wal(self) -> None:
        delay = WAL_RETRY_FIRST_S
        while self._wal_owed and self._writer is not None:
            await anyio.sleep(delay)
            try:
                await self.settle_wal(0)
            except Exception:  # noqa: BLE001 - a failed attempt must not end the retries
                log.warning("database %s: emptying the write-ahead log failed; retrying", self.path, exc_info=True)
            delay = min(delay * 2, WAL_RETRY_MAX_S)

    async def settle_wal(self, wait_ms: int) -> bool:
        """Try to empty the write-ahead log a forget could not, waiting up to `wait_ms` for readers.
        True when nothing is owed any more."""
        if not self._wal_owed:
            return True
        try:
            cleared = await self._run(self._writer, truncate_wal, (wait_ms,))
        except Exception as exc:
            if not is_busy(exc):
                raise
            cleared = False
        if cleared:
            self._wal_owed = False
            log.info(
                "database %s: the write-ahead log is empty now; no copy of forgotten text is left in it", self.path
            )
        return cleared

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(conn, *args)` on the reader connection (WAL: never waits for the writer)."""
        return await self._retrying(self._reader, fn, args)

    async def _retrying(self, conn: aiosqlite.Connection | None, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """Retry with jittered backoff while another process holds a lock, up to a deadline;
        then a clear error -- never a bare "database is locked" to the caller."""
        deadline = time.monotonic() + WRITE_DEADLINE_S
        delay = 0.02
        while True:
            try:
                return await self._run(conn, fn, args)
            except Exception as exc:
                if not is_busy(exc):
                    raise
                if time.monotonic() + delay > deadline:
                    raise StoreBusy(
                        f"the database {self.path} stayed locked by another process for "
                        f"{WRITE_DEADLINE_S:.0f}s; try again"
                    ) from exc
                log.debug("database busy; retrying in %.0f ms", delay * 1000)
                await anyio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
