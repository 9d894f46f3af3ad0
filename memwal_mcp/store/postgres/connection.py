"""Connecting to PostgreSQL: the URL as a user may see it, connections and the pools.

psycopg is imported here and by the modules beside this one only: `store.open_store` reaches
this package only when a database URL is configured, so the SQLite path never loads it.

Every connection is in autocommit mode; a unit of work opens its own transaction (backend.py),
so no statement ever waits in an implicit transaction a pool would have to roll back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool

from ...errors import StoreBusy, StoreUnavailable

# pg_advisory_xact_lock keys (two int4: "memwal", then what the lock is for).
ADVISORY_NAMESPACE = 0x6D656D77
MIGRATION_LOCK = f"SELECT pg_advisory_xact_lock({ADVISORY_NAMESPACE}, 1)"
# What contract.StoreWriter.transaction() means by "the write lock taken up front": one writer
# transaction at a time over the whole database, as BEGIN IMMEDIATE gives SQLite, so a
# read-then-write (a forget, a curation job, an import) cannot race another one.
WRITE_LOCK = f"SELECT pg_advisory_xact_lock({ADVISORY_NAMESPACE}, 2)"
# (3: the builder of lane indexes, lane_indexes.py, a session-level lock.)

APPLICATION_NAME = "memwal-mcp"
# How long a statement of a unit of work may wait for a lock another session holds (a row locked
# by `SELECT ... FOR UPDATE` in an open psql session, the write lock held by a stuck writer)
# before it fails with LockNotAvailable: the SQLite backend's WRITE_DEADLINE_S, so neither backend
# lets a forget or a curation job wait without limit while holding the write lock.
LOCK_WAIT_S = 30.0


def is_url(value: str | None) -> bool:
    return bool(value) and str(value).split("://", 1)[0].lower() in ("postgresql", "postgres")


def redacted(url: str) -> str:
    """The URL without its password, for messages and `location`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def connect(url: str) -> psycopg.Connection:
    """One autocommit connection, or StoreUnavailable saying why there is none."""
    try:
        return psycopg.connect(url, autocommit=True, application_name=APPLICATION_NAME, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot connect to PostgreSQL at {redacted(url)}: {_first_line(exc)}") from exc


def _configure(conn: psycopg.Connection, lock_wait_s: float | None = None) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    if lock_wait_s is not None:  # SET, not a connection option: a URL's own options stay as given
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{max(1, round(lock_wait_s * 1000))}ms",))


@contextmanager
def lock_bounded(locked: Callable[[], StoreBusy]) -> Iterator[None]:
    """A lock wait past lock_timeout as the store's one-line StoreBusy ("try again"), raised
    after the transaction or savepoint rolled back: no caller sees the driver's text, and a
    caller that counts a savepoint's failure as one job's (curation) can tell another
    session's lock from the job's fault."""
    try:
        yield
    except psycopg.errors.LockNotAvailable as exc:
        raise locked() from exc


def pool(url: str, name: str, max_size: int, lock_wait_s: float | None = None) -> ConnectionPool:
    """A pool of autocommit connections that know pgvector's type (the schema exists by now).

    `lock_wait_s` sets the server's lock_timeout on each of them: a statement waiting longer for
    a lock fails (LockNotAvailable) and its transaction rolls back, releasing what it held."""
    opened: ConnectionPool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True, "application_name": APPLICATION_NAME, "connect_timeout": 10},
        configure=lambda conn: _configure(conn, lock_wait_s),
        name=name,
        open=False,
        timeout=60.0,
    )
    try:
        opened.open(wait=True, timeout=30.0)
    except Exception as exc:
        opened.close()
        raise StoreUnavailable(f"cannot open connections to PostgreSQL at {redacted(url)}: {_first_line(exc)}") from exc
    return opened
