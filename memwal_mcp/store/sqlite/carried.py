"""What a migration carries besides an export's records: tokens with their revocation state,
the curation counters and the deferred nominations (statements only; transfer/migrate.py
decides). Each call is a unit of work of its own and may be repeated: a re-run changes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from ..records import TokenRow
from .database import transaction


def deferred_nomination_ids(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute(
        "SELECT m.owner, m.id, d.job_id FROM deferred_nominations d JOIN memories m ON m.rowid = d.memory_rowid"
        " ORDER BY d.memory_rowid"
    ).fetchall()
    return [(str(owner), str(memory_id), str(job_id)) for owner, memory_id, job_id in rows]


def import_tokens(conn: sqlite3.Connection, rows: Sequence[TokenRow]) -> tuple[int, int]:
    added = revoked = 0
    with transaction(conn):
        for row in rows:
            found = conn.execute("SELECT owner, revoked_at FROM api_tokens WHERE hash = ?", (row.hash,)).fetchone()
            if found is None:
                conn.execute(
                    "INSERT INTO api_tokens (hash, owner, scopes, label, created_at, revoked_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (row.hash, row.owner, ",".join(row.scopes), row.label, row.created_at, row.revoked_at),
                )
                added += 1
            elif found[0] == row.owner and found[1] is None and row.revoked_at is not None:
                conn.execute("UPDATE api_tokens SET revoked_at = ? WHERE hash = ?", (row.revoked_at, row.hash))
                revoked += 1
    return added, revoked


def merge_counters(conn: sqlite3.Connection, counts: Mapping[str, int]) -> None:
    with transaction(conn):
        conn.executemany(
            "INSERT INTO curation_counters (marker, count) VALUES (?, ?)"
            " ON CONFLICT (marker) DO UPDATE SET count = MAX(count, excluded.count)",
            sorted(counts.items()),
        )


def import_deferred_nominations(conn: sqlite3.Connection, items: Sequence[tuple[str, str, str]]) -> int:
    added = 0
    with transaction(conn):
        for owner, memory_id, job_id in items:
            added += conn.execute(
                "INSERT OR IGNORE INTO deferred_nominations (memory_rowid, lane_id, job_id)"
                " SELECT rowid, lane_id, ? FROM memories WHERE owner = ? AND id = ? AND status = 'live'",
                (job_id, owner, memory_id),
            ).rowcount
    return added
