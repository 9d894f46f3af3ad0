"""After a forget: VACUUM the tables that held the text, so its old row versions go too.

When a forget commits, no live row holds the text. The row versions it replaced stay in the
table files until VACUUM removes them, and VACUUM can only remove those no transaction may
still see: a transaction that began before the forget (a `psql` session left open, a long
export) keeps them. VACUUM VERBOSE says how many it had to keep ("N are dead but not yet
removable"); until that is 0 everywhere the store owes the erasure and retries it, like the
SQLite backend retries emptying its write-ahead log.

Beyond this the server's own files are PostgreSQL's to manage: VACUUM marks the space free
but does not overwrite it, so the table files, the write-ahead log segments and replicas may
hold the bytes until they are reused or recycled. A forget cannot change that, so its reply
says so (`left_on_disk`) instead of claiming the bytes gone from every file.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence

import psycopg
from psycopg import Connection
from psycopg.pq import TransactionStatus

from . import vectors

log = logging.getLogger(__name__)

# Tables whose rows hold a memory's text or words.
TABLES = ("memories", "memory_revisions", "remember_jobs", "lane_terms")
_KEPT = re.compile(r"(\d+) are dead but not yet removable")
# A forget waits this long for transactions that began before it (a recall's query, a worker's
# claim on another replica) to end, as the SQLite backend waits for its readers: a snapshot held
# for a few milliseconds must not turn an ordinary forget into "not yet from every file".
FORGET_WAIT_MS = 2000
FORGET_AGAIN_WAIT_MS = 200  # forgetting again: nothing was erased now, an earlier forget waited
_FIRST_PAUSE_S = 0.02


def left_on_disk(*, cleared: bool, already: bool, kept_by: Sequence[str] = ()) -> str:
    """What a PostgreSQL forget leaves, said as this call found it: whether VACUUM removed the
    old row versions (`cleared`; else who keeps them, `kept_by`), without claiming a VACUUM of
    rows this call did not erase (`already`), and then what every forget leaves, even one whose
    VACUUM kept nothing, and what an operator can do: the rows are gone from every query, not
    the bytes from the disk."""
    erased = "its rows were erased when it was first forgotten" if already else "the rows are erased"
    held = f"by {'; '.join(kept_by)}" if kept_by else "by a transaction that began before the forget"
    if not cleared and already:
        # VACUUM answers for whole tables: the versions it keeps may be another forget's.
        done = (
            f"{erased}; VACUUM still finds old row versions in these tables kept {held} (this memory's, if"
            " that transaction began before it was forgotten, or another forget's) until that transaction ends"
            " and the forget is run again, and even then "
        )
    elif not cleared:
        done = (
            f"{erased}, but their old row versions are still kept {held} until that transaction ends and the "
            "forget is run again (a running server retries it on its own), and even then "
        )
    elif already:
        done = f"{erased}, and VACUUM now finds no old version left in these tables (an earlier VACUUM or this one removed them), but "
    else:
        done = "the rows are erased and VACUUMed, but "
    return done + (
        "PostgreSQL does not overwrite freed space in its data files "
        "and write-ahead log, so copies of the bytes may remain on the server's disk until that space is "
        f"reused; to remove them, an operator can run VACUUM FULL (or pg_repack) on {', '.join(TABLES)} and "
        f"{vectors.VECTOR_TABLE}*, let the old WAL segments be recycled (CHECKPOINT), and keep the disk "
        "encrypted at rest (replicas and base backups hold copies of their own)"
    )


def vacuum(conn: Connection) -> bool:
    """VACUUM the tables a forget changed; True when no dead row version had to be kept."""
    if conn.info.transaction_status != TransactionStatus.IDLE:
        return False  # inside a transaction: VACUUM cannot run here
    kept: list[int] = []

    def notice(diagnostic: psycopg.errors.Diagnostic) -> None:
        for match in _KEPT.finditer(diagnostic.message_primary or ""):
            kept.append(int(match.group(1)))

    conn.add_notice_handler(notice)
    try:
        for table in (*TABLES, *vectors.tables(conn)):
            conn.execute(f"VACUUM (VERBOSE) {table}")
    finally:
        conn.remove_notice_handler(notice)
    if not kept:
        log.warning("VACUUM VERBOSE reported no tuple counts; assuming forgotten rows are gone")
    return not any(kept)


def vacuum_waiting(conn: Connection, wait_ms: int) -> list[str] | None:
    """`vacuum`, again with growing pauses while a transaction that began before the forget
    keeps the old row versions, for up to `wait_ms`. None when none is kept; else the sessions
    keeping them (`holders`), also logged, so the reply can say whose transaction to end."""
    deadline = time.monotonic() + wait_ms / 1000
    pause = _FIRST_PAUSE_S
    while not vacuum(conn):
        left = deadline - time.monotonic()
        if left <= 0:
            kept_by = holders(conn)
            log.warning("old row versions of forgotten text are kept by: %s", "; ".join(kept_by) or "unknown")
            return kept_by
        time.sleep(min(pause, left))
        pause *= 2
    return None


def holders(conn: Connection) -> list[str]:
    """The other sessions of this database holding a snapshot or a transaction id, oldest first:
    what keeps VACUUM from removing what a forget left (pid, application, state, since when)."""
    rows = conn.execute(
        "SELECT pid, application_name, state, xact_start FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        " AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL) ORDER BY xact_start NULLS LAST"
    ).fetchall()
    return [
        f"pid {pid} ({app or 'no application name'}, {state or 'no state'}"
        + (f" since {start:%H:%M:%S}" if start is not None else "")
        + ")"
        for pid, app, state, start in rows
    ]
