"""What a migration carries besides an export's records: tokens with their revocation state,
the curation counters and the deferred nominations (statements only; transfer/migrate.py
decides). Each call is a unit of work of its own and may be repeated: a re-run changes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from psycopg import Connection

from ..records import TokenRow


def deferred_nomination_ids(conn: Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute(
        "SELECT m.owner, m.id, d.job_id FROM deferred_nominations d JOIN memories m ON m.pk = d.memory_pk"
        " ORDER BY d.memory_pk"
    ).fetchall()
    return [(str(owner), str(memory_id), str(job_id)) for owner, memory_id, job_id in rows]


def import_tokens(conn: Connection, rows: Sequence[TokenRow]) -> tuple[int, int]:
    added = revoked = 0
    with conn.transaction():
        for row in rows:
            found = conn.execute(
                "SELECT owner, revoked_at FROM api_tokens WHERE hash = %s FOR UPDATE", (row.hash,)
            ).fetchone()
            if found is None:
                conn.execute(
                    "INSERT INTO api_tokens (hash, owner, scopes, label, created_at, revoked_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    (row.hash, row.owner, ",".join(row.scopes), row.label, row.created_at, row.revoked_at),
                )
                added += 1
            elif found[0] == row.owner and found[1] is None and row.revoked_at is not None:
                conn.execute("UPDATE api_tokens SET revoked_at = %s WHERE hash = %s", (row.revoked_at, row.hash))
                revoked += 1
    return added, revoked


def merge_counters(conn: Connection, counts: Mapping[str, int]) -> None:
    with conn.transaction():
        for marker, count in sorted(counts.items()):
            conn.execute(
                "INSERT INTO curation_counters (marker, count) VALUES (%s, %s)"
                " ON CONFLICT (marker) DO UPDATE SET count = GREATEST(curation_counters.count, EXCLUDED.count)",
                (marker, count),
            )


def import_deferred_nominations(conn: Connection, items: Sequence[tuple[str, str, str]]) -> int:
    added = 0
    with conn.transaction():
        for owner, memory_id, job_id in items:
            added += conn.execute(
                "INSERT INTO deferred_nominations (memory_pk, lane_id, job_id)"
                " SELECT pk, lane_id, %s FROM memories WHERE owner = %s AND id = %s AND status = 'live'"
                " ON CONFLICT DO NOTHING",
                (job_id, owner, memory_id),
            ).rowcount
    return added
