"""Export at the row level: an owner's rows (or every owner's) in order, in one snapshot.

A read unit of work is one REPEATABLE READ transaction (backend.py), so every query of an
export sees the same state while other replicas write; rows stream through a server-side
cursor, so memory use does not grow with the database. Each kind comes in the order it was
written, as on SQLite.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from psycopg import Connection
from psycopg.pq import TransactionStatus

from ...records import Job
from ..records import Kind, LaneRow, MemoryRecord, RevisionRow, TombstoneRow
from . import jobs

CHUNK = 500


@contextmanager
def read_snapshot(conn: Connection) -> Iterator[None]:
    """Inside a transaction already (a reader's is REPEATABLE READ): nothing to do. Outside
    (the writer between units): one REPEATABLE READ READ ONLY transaction for the block."""
    if conn.info.transaction_status != TransactionStatus.IDLE:
        yield
        return
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")


def _where(owner: str | None, column: str = "owner", extra: str | None = None) -> tuple[str, tuple[str, ...]]:
    clauses = [f"{column} = %s"] if owner is not None else []
    if extra:
        clauses.append(extra)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else "", (owner,) if owner is not None else ())


def exported_owners(conn: Connection, owner: str | None) -> list[str]:
    if owner is not None:
        return [owner]
    rows = conn.execute("SELECT owner FROM lanes UNION SELECT owner FROM forgotten ORDER BY 1").fetchall()
    return [row[0] for row in rows]


_REVISIONS_FROM = "FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"


def export_counts(conn: Connection, owner: str | None) -> dict[Kind, int]:
    def count(table: str, where: tuple[str, tuple[str, ...]]) -> int:
        row = conn.execute(f"SELECT count(*) {table} {where[0]}", where[1]).fetchone()
        return int(row[0]) if row else 0

    return {
        "lane": count("FROM lanes", _where(owner)),
        "job": count("FROM remember_jobs", _where(owner)),
        "memory": count("FROM memories", _where(owner, extra="status != 'forgotten'")),
        "revision": count(_REVISIONS_FROM, _where(owner, "m.owner", "m.status != 'forgotten'")),
        "tombstone": count("FROM forgotten", _where(owner)),
    }


def _stream(conn: Connection, sql: str, params: Sequence[object]) -> Iterator[tuple]:
    if conn.info.transaction_status == TransactionStatus.IDLE:  # no snapshot to hold a cursor in
        yield from conn.execute(sql, params).fetchall()
        return
    with conn.cursor(name=f"memwal_export_{secrets.token_hex(4)}") as cursor:
        cursor.itersize = CHUNK
        cursor.execute(sql, params)
        yield from cursor


def iter_lanes(conn: Connection, owner: str | None) -> Iterator[LaneRow]:
    where, params = _where(owner)
    for row in _stream(conn, f"SELECT owner, namespace FROM lanes {where} ORDER BY id", params):
        yield LaneRow(*row)


def iter_jobs(conn: Connection, owner: str | None) -> Iterator[Job]:
    where, params = _where(owner)
    sql = f"SELECT {jobs.JOB_COLUMNS} FROM remember_jobs {where} ORDER BY seq"
    for row in _stream(conn, sql, params):
        yield jobs.job_of(row)


def iter_memories(conn: Connection, owner: str | None) -> Iterator[MemoryRecord]:
    where, params = _where(owner, extra="status != 'forgotten'")
    sql = (
        "SELECT id, owner, namespace, body, status, retired_into, source_job_id, occurrences, occurred_at,"
        f" created_at, updated_at, expires_at, superseded_by FROM memories {where} ORDER BY pk"
    )
    for row in _stream(conn, sql, params):
        yield MemoryRecord(*row)


def iter_revisions(conn: Connection, owner: str | None) -> Iterator[RevisionRow]:
    where, params = _where(owner, "m.owner", "m.status != 'forgotten'")
    sql = (
        "SELECT m.owner, m.id, r.body, r.decision, r.job_id, r.llm_model, r.guard, r.merged_ids, r.created_at,"
        " r.expires_at"
        f" {_REVISIONS_FROM} {where} ORDER BY r.id"
    )
    for owner_, memory_id, body, decision, job_id, llm_model, guard, merged, created_at, expiry in _stream(
        conn, sql, params
    ):
        merged_ids = tuple(merged.split(",")) if merged else ()
        yield RevisionRow(owner_, memory_id, body, decision, job_id, llm_model, guard, merged_ids, created_at, expiry)


def iter_tombstones(conn: Connection, owner: str | None) -> Iterator[TombstoneRow]:
    where, params = _where(owner, "f.owner")
    sql = (
        "SELECT f.memory_id, f.owner, f.namespace, f.jobs, f.forgotten_at, m.source_job_id, m.retired_into,"
        " m.occurred_at, m.created_at, m.updated_at FROM forgotten f"
        f" LEFT JOIN memories m ON m.id = f.memory_id AND m.owner = f.owner {where}"
        " ORDER BY f.forgotten_at, m.pk NULLS FIRST, f.memory_id"
    )
    for row in _stream(conn, sql, params):
        yield TombstoneRow(*row)
