"""After a forget: VACUUM the tables that held the text, so its old row versions go too.

When a forget commits, no live row holds the text. The row versions it replaced stay in the
table files until VACUUM removes them, and VACUUM can only remove those no transaction may
still see: a transaction that began before the forget (a `psql` session left open, a long
export) keeps them. VACUUM VERBOSE says how many it had to keep ("N are dead but not yet
removable"); until that is 0 everywhere the store owes the erasure and retries it, like the
SQLite backend retries emptying its write-ahead log.

Beyond this the server's own files are PostgreSQL's to manage: its write-ahead log segments
and replicas, and freed space inside pages, may hold the bytes until they are recycled.
"""

from __future__ import annotations

import logging
import re

import psycopg
from psycopg import Connection
from psycopg.pq import TransactionStatus

from . import vectors

log = logging.getLogger(__name__)

# Tables whose rows hold a memory's text or words.
TABLES = ("memories", "memory_revisions", "remember_jobs", "lane_terms")
_KEPT = re.compile(r"(\d+) are dead but not yet removable")


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
