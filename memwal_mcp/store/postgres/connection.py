"""Connecting to PostgreSQL: the URL as a user may see it, connections and the pools.

psycopg is imported here and by the modules beside this one only: `store.open_store` reaches
this package only when a database URL is configured, so the SQLite path never loads it.

Every connection is in autocommit mode; a unit of work opens its own transaction (backend.py),
so no statement ever waits in an implicit transaction a pool would have to roll back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreBusy, StoreUnavailable, StoreUnreachable

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
# How long a unit of work waits for a connection from its pool: every one busy, or none to be had
# because the server does not answer. Long enough for a burst of fifty agents on eight connections
# (a unit of work takes milliseconds); short enough that a caller hears "try again" while its
# client still waits, where psycopg_pool's default let a request hang a minute for a plain 500.
POOL_WAIT_S = 15.0
# TCP settings for every connection, unless the URL sets them: a server cut off without a reset
# (a partition, a host gone) is noticed in about a minute instead of the kernel's quarter of an hour,
# on an idle pooled connection (keepalives) and on one that sent a statement (tcp_user_timeout).
TCP_SETTINGS = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}
# SQLSTATEs of a connection that went away under a statement (class 08, and the server's shutdown
# and start-up ones); a client-side failure (the socket closed, libpq's "server closed the connection
# unexpectedly") has none.
_CONNECTION_LOST = ("08", "57P01", "57P02", "57P03")


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


def _options(url: str) -> dict[str, Any]:
    """The keyword arguments of every connection: the URL's own options win over TCP_SETTINGS."""
    given = conninfo_to_dict(url)
    tcp = {key: value for key, value in TCP_SETTINGS.items() if key not in given}
    return {"autocommit": True, "application_name": APPLICATION_NAME, "connect_timeout": 10, **tcp}


def connection_lost(exc: BaseException) -> bool:
    """Whether the driver's error says the server went away, rather than refused a statement."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, psycopg.errors.LockNotAvailable):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(_CONNECTION_LOST)


@contextmanager
def answered(location: str) -> Iterator[None]:
    """A server that does not answer, as the store's one-line StoreUnreachable ("try again"), for
    every unit of work: a tool call says what happened instead of the SDK's bare "Error executing
    tool", and HTTP callers get a 503 instead of a traceback and a plain 500."""
    try:
        yield
    except PoolTimeout as exc:
        raise StoreUnreachable(
            f"PostgreSQL at {location} gave no connection within {POOL_WAIT_S:g}s (it is down or "
            "unreachable, or every connection stayed busy); try again"
        ) from exc
    except psycopg.OperationalError as exc:
        if not connection_lost(exc):
            raise
        raise StoreUnreachable(f"PostgreSQL at {location} did not answer ({_first_line(exc)}); try again") from exc


def connect(url: str) -> psycopg.Connection:
    """One autocommit connection, or StoreUnavailable saying why there is none."""
    try:
        return psycopg.connect(url, **_options(url))
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
        kwargs=_options(url),
        configure=lambda conn: _configure(conn, lock_wait_s),
        name=name,
        open=False,
        timeout=POOL_WAIT_S,
    )
    try:
        opened.open(wait=True, timeout=30.0)
    except Exception as exc:
        opened.close()
        raise StoreUnavailable(f"cannot open connections to PostgreSQL at {redacted(url)}: {_first_line(exc)}") from exc
    return opened
