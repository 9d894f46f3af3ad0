"""PostgresStore: the contract's async face over one PostgreSQL database (see store/contract.py).

Units of work run on worker threads (anyio) with a connection from a pool: a read in one
REPEATABLE READ READ ONLY transaction (one snapshot for the whole of `fn`), a write on an
autocommit connection whose methods open their own transactions (views.py). Vector searches
have a small pool of their own: a search obtained in a unit of work runs after it, or beside
it on another thread, and must never wait for a connection that unit holds.

Several replicas may share the database: migrations, leases and the write lock are in it.

Big lanes' HNSW indexes (lane_indexes.py) are kept by a maintenance pass that a write starts at
most every MAINTAIN_EVERY_S, on a connection of its own in a worker thread: a build may take
minutes and must not hold a unit of work's connection or the event loop. Closing the store
cancels a build in progress (the index is left invalid, and the next pass rebuilds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import anyio
import psycopg
from psycopg import Connection
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import InvalidInput, StoreBusy, StoreUnavailable, StoreUnreachable
from ..contract import StoreReader, StoreWriter
from ..records import BackupResult
from . import erasure, lane_indexes, rates
from .connection import LOCK_WAIT_S, answered, connect, lock_bounded, pool, redacted
from .migrations import apply_migrations
from .views import PostgresReader, PostgresWriter
from .words_pass import retokenize

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")

# While a forget's old row versions are kept, how often to VACUUM again.
ERASURE_RETRY_FIRST_S = 0.2
ERASURE_RETRY_MAX_S = 2.0
# Connections for units of work (reads and writes of one process), and for vector searches.
UNITS = 8
SEARCHES = 4
# How often writes start a pass over the lane indexes (at most; one pass at a time).
MAINTAIN_EVERY_S = 30.0


class PostgresStore:
    def __init__(
        self,
        url: str,
        *,
        units: int = UNITS,
        searches: int = SEARCHES,
        hnsw_min_rows: int = lane_indexes.DEFAULT_MIN_ROWS,
        maintain_every_s: float | None = MAINTAIN_EVERY_S,
        lock_wait_s: float = LOCK_WAIT_S,
    ) -> None:
        self.url = url
        self.lock_wait_s = lock_wait_s  # a unit of work's longest wait for one lock (lock_timeout)
        self.hnsw_min_rows = hnsw_min_rows
        self._maintain_every_s = maintain_every_s  # None: no pass in the background (maintain_indexes only)
        self._sizes = (units, searches)
        self._maintenance: asyncio.Task[lane_indexes.Maintenance] | None = None
        self._maintained_at = -float("inf")
        self._builder: Connection | None = None  # the maintenance pass's connection, while it runs
        self._units: ConnectionPool | None = None
        self._searches: ConnectionPool | None = None
        self._erasure_owed = False
        self._kept_by: list[str] = []  # who kept the last forget's old row versions (erasure.holders)
        self._retry: asyncio.Task[None] | None = None
        self._pinging = anyio.CapacityLimiter(1)  # one health read in flight (ping)

    @property
    def location(self) -> str:
        return redacted(self.url)

    def own_files(self) -> tuple[Path, ...]:
        return ()  # the server's files: no export can land on them

    async def open(self) -> None:
        await anyio.to_thread.run_sync(self._open)

    def _open(self) -> None:
        conn = connect(self.url)
        try:
            applied = apply_migrations(conn)
            retokenize(conn)
        except StoreUnavailable:
            raise
        except Exception as exc:
            raise StoreUnavailable(
                f"cannot set up the memwal-mcp schema in PostgreSQL at {self.location}: {exc}".splitlines()[0]
                + " (the database needs the pgvector extension, and a role that may create tables)"
            ) from exc
        finally:
            conn.close()
        if applied:
            log.info("database %s: applied migrations %s", self.location, ", ".join(applied))
        units, searches = self._sizes
        self._units = pool(self.url, "memwal-units", units, self.lock_wait_s)
        try:
            self._searches = pool(self.url, "memwal-searches", searches)
        except BaseException:
            self._units.close()
            self._units = None
            raise

    async def close(self) -> None:
        await self._stop_maintenance()
        task, self._retry = self._retry, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._erasure_owed and self._units is not None:
            await self.settle_erasure(1000)
        for opened in (self._searches, self._units):
            if opened is not None:
                await anyio.to_thread.run_sync(opened.close)
        self._units = self._searches = None

    def _pools(self) -> tuple[ConnectionPool, ConnectionPool]:
        if self._units is None or self._searches is None:
            raise StoreUnavailable("the database is not open")
        return self._units, self._searches

    async def read(self, fn: Callable[Concatenate[StoreReader, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        units, searches = self._pools()

        def run() -> T:
            with answered(self.location), units.connection() as conn, lock_bounded(self._locked):
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    return fn(PostgresReader(conn, searches, self.hnsw_min_rows), *args, **kwargs)
                finally:
                    _end(conn)

        return await anyio.to_thread.run_sync(run)

    async def rate_grant(
        self, key: str, want: int, rate_per_s: float, burst: float, now: float
    ) -> tuple[int, float] | None:
        units, _ = self._pools()

        def run() -> tuple[int, float]:
            with answered(self.location), units.connection() as conn, lock_bounded(self._locked):
                return rates.grant(conn, key, want, rate_per_s, burst, now)

        return await anyio.to_thread.run_sync(run)

    async def ping(self, timeout_s: float) -> None:
        """A read within `timeout_s`, or StoreUnreachable. A server that stopped answering without
        closing its connections (frozen, or cut off without a reset) leaves the read waiting in its
        thread: the ping gives up on it, and while it waits the next pings wait for its slot, so
        a health check answers on time however often it is asked and no thread piles up."""
        units, _ = self._pools()

        def run() -> None:
            try:
                with units.connection(timeout=timeout_s) as conn:
                    conn.execute("SELECT 1")
            except (PoolTimeout, psycopg.Error) as exc:
                raise StoreUnreachable(f"PostgreSQL at {self.location} did not answer: {exc}") from exc

        with anyio.move_on_after(timeout_s) as waited:
            await anyio.to_thread.run_sync(run, abandon_on_cancel=True, limiter=self._pinging)
        if waited.cancelled_caught:
            raise StoreUnreachable(f"PostgreSQL at {self.location} did not answer within {timeout_s:g}s")

    async def write(self, fn: Callable[Concatenate[StoreWriter, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        units, searches = self._pools()

        def run() -> T:
            with answered(self.location), units.connection() as conn, lock_bounded(self._locked):
                writer = PostgresWriter(conn, searches, self.hnsw_min_rows, self._locked)
                try:
                    return fn(writer, *args, **kwargs)
                finally:
                    _end(conn)
                    if writer.kept_by is not None:
                        self._kept_by = writer.kept_by

        result = await anyio.to_thread.run_sync(run)
        if self._erasure_owed:
            await self.settle_erasure(0)
        self._schedule_maintenance()
        return result

    def _locked(self) -> StoreBusy:
        """The one-line error of a lock wait past lock_timeout (another session holding a row or
        the write lock), as the SQLite backend says its busy deadline; raised by every unit of
        work and by the writer's transactions and savepoints (connection.lock_bounded)."""
        return StoreBusy(
            f"the database {self.location} stayed locked by another session for {self.lock_wait_s:g}s; try again"
        )

    # --- lane indexes ------------------------------------------------------------------

    def _schedule_maintenance(self) -> None:
        every, now = self._maintain_every_s, time.monotonic()
        running = self._maintenance is not None and not self._maintenance.done()
        if every is None or running or now - self._maintained_at < every:
            return
        self._maintained_at = now
        self._maintenance = asyncio.get_running_loop().create_task(
            self._maintain_in_background(), name="memwal-pg-lane-indexes"
        )

    async def _maintain_in_background(self) -> lane_indexes.Maintenance:
        try:
            return await self.maintain_indexes()
        except Exception:  # noqa: BLE001 - a failed pass is retried by a later write
            log.warning("database %s: keeping the lane indexes failed; retrying later", self.location, exc_info=True)
            return lane_indexes.Maintenance()

    async def maintain_indexes(self) -> lane_indexes.Maintenance:
        """One pass now: build the indexes big lanes lack, drop those of lanes that shrank (busy
        when another connection, this replica's or another's, is at it)."""
        self._pools()

        def run() -> lane_indexes.Maintenance:
            conn = connect(self.url)
            self._builder = conn
            try:
                return lane_indexes.maintain(conn, self.hnsw_min_rows)
            finally:
                self._builder = None
                conn.close()

        return await anyio.to_thread.run_sync(run)

    async def _stop_maintenance(self) -> None:
        task, self._maintenance = self._maintenance, None
        if task is None or task.done():
            return
        builder = self._builder
        if builder is not None:
            with contextlib.suppress(Exception):
                builder.cancel()  # thread-safe: ends the statement the pass is waiting on
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await task

    @property
    def erasure_pending(self) -> bool:
        return self._erasure_owed

    @property
    def erasure_kept(self) -> str:
        return f"{self._kept_where()}; once it ends, VACUUM removes them"

    def erasure_rerun(self, command: str) -> str:
        return f"{self._kept_where()}; when it ends, run `{command}` again to VACUUM them away"

    def _kept_where(self) -> str:
        """Which session keeps the old row versions, as the last VACUUM that could not remove
        them found it: the user can only end a transaction they can name."""
        held = f"held by {'; '.join(self._kept_by)}" if self._kept_by else "a reader holding an older snapshot"
        return (
            "old row versions in the database's table files still hold it while another transaction that "
            f"began before the forget stays open ({held})"
        )

    def erasure_left(self, cleared: bool, already: bool) -> str | None:
        return erasure.left_on_disk(cleared=cleared, already=already, kept_by=() if cleared else self._kept_by)

    def owe_erasure(self) -> None:
        """A forget's old row versions are still kept (an older snapshot): VACUUM again on a
        timer until none is, also while no tool call comes, as well as after each write."""
        self._erasure_owed = True
        if self._retry is None or self._retry.done():
            self._retry = asyncio.get_running_loop().create_task(self._retry_erasure(), name="memwal-pg-erasure")

    async def _retry_erasure(self) -> None:
        delay = ERASURE_RETRY_FIRST_S
        while self._erasure_owed and self._units is not None:
            await anyio.sleep(delay)
            try:
                await self.settle_erasure(0)
            except Exception:  # noqa: BLE001 - a failed attempt must not end the retries
                log.warning("database %s: VACUUM after a forget failed; retrying", self.location, exc_info=True)
            delay = min(delay * 2, ERASURE_RETRY_MAX_S)

    async def backup(self, target: Path, *, force: bool, verify: bool) -> BackupResult:
        raise InvalidInput(
            f"memwal-mcp backup copies a SQLite file; this store is PostgreSQL ({self.location}): "
            "back it up with pg_dump (e.g. pg_dump --format=custom --file=memwal.dump DBNAME)"
        )

    async def settle_erasure(self, wait_ms: int) -> bool:
        """VACUUM what forgets left; retried until a pass keeps no dead row version. `wait_ms`
        bounds the waiting: one more pass after that long if the first kept something."""
        if not self._erasure_owed:
            return True
        units, _ = self._pools()

        def run() -> bool:
            with answered(self.location), units.connection() as conn, lock_bounded(self._locked):
                cleared = erasure.vacuum(conn)
                if not cleared:
                    self._kept_by = erasure.holders(conn)
                return cleared

        cleared = await anyio.to_thread.run_sync(run)
        if not cleared and wait_ms > 0:
            await anyio.sleep(wait_ms / 1000)
            cleared = await anyio.to_thread.run_sync(run)
        if cleared:
            self._erasure_owed = False
            self._kept_by = []
            log.info("database %s: no old row version of forgotten text is left in its tables", self.location)
        return cleared


def _end(conn: Connection) -> None:
    """Roll back what a unit of work left open (a reader's snapshot, or a failed write), so the
    connection goes back to the pool idle."""
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001 - a broken connection: the pool discards it
        log.debug("rolling back a pooled connection failed", exc_info=True)
