"""Export at the row level: an owner's rows (or every owner's) read in order, in one snapshot.

Export reads inside one read transaction (a consistent snapshot even while another
process curates) and streams with `fetchmany`, so memory use does not grow with the
database. Each kind comes in the order it was written: jobs in arrival order, memories
as they were made, revisions oldest first, tombstones in the order they were forgotten.

Apart from the import (transfer_import.py) because the two share no code: this side only
reads, that side only writes and checks what it wrote.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ...records import Job
from ..records import Kind, LaneRow, MemoryRecord, RevisionRow, TombstoneRow
from . import jobs

# Rows fetched per round trip while exporting.
CHUNK = 500


# --- export ----------------------------------------------------------------


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A read transaction: every query inside sees the same state of the file (WAL)."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def _where(owner: str | None, column: str = "owner", extra: str | None = None) -> tuple[str, tuple[str, ...]]:
    """A WHERE clause limiting rows to one owner (or none, for every owner), plus `extra`."""
    clauses = [f"{column} = ?"] if owner is not None else []
    if extra:
        clauses.append(extra)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else "", (owner,) if owner is not None else ())


def exported_owners(conn: sqlite3.Connection, owner: str | None) -> list[str]:
    """The owners an export covers: one, or every owner that has a lane or a tombstone."""
    if owner is not None:
        return [owner]
    rows = conn.execute("SELECT owner FROM lanes UNION SELECT owner FROM forgotten ORDER BY 1").fetchall()
    return [row[0] for row in rows]


_REVISIONS_FROM = "FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"


def export_counts(conn: sqlite3.Connection, owner: str | None) -> dict[Kind, int]:
    """How many records of each kind an export of `owner` (None: every owner) writes."""

    def count(table: str, where: tuple[str, tuple[str, ...]]) -> int:
        return conn.execute(f"SELECT COUNT(*) {table} {where[0]}", where[1]).fetchone()[0]

    return {
        "lane": count("FROM lanes", _where(owner)),
        "job": count("FROM remember_jobs", _where(owner)),
        "memory": count("FROM memories", _where(owner, extra="status != 'forgotten'")),
        "revision": count(_REVISIONS_FROM, _where(owner, "m.owner", "m.status != 'forgotten'")),
        "tombstone": count("FROM forgotten", _where(owner)),
    }


def _stream(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> Iterator[tuple]:
    cursor = conn.execute(sql, params)
    while rows := cursor.fetchmany(CHUNK):
        yield from rows


def iter_lanes(conn: sqlite3.Connection, owner: str | None) -> Iterator[LaneRow]:
    where, params = _where(owner)
    for row in _stream(conn, f"SELECT owner, namespace FROM lanes {where} ORDER BY id", params):
        yield LaneRow(*row)


def iter_jobs(conn: sqlite3.Connection, owner: str | None) -> Iterator[Job]:
    """The journal in arrival order. A forgotten memory's jobs come with empty text."""
    where, params = _where(owner)
    sql = f"SELECT {jobs.JOB_COLUMNS} FROM remember_jobs {where} ORDER BY seq"
    for row in _stream(conn, sql, params):
        yield jobs.job_of(row)


def iter_memories(conn: sqlite3.Connection, owner: str | None) -> Iterator[MemoryRecord]:
    """Live and retired memories; forgotten ones are only tombstones."""
    where, params = _where(owner, extra="status != 'forgotten'")
    sql = (
        "SELECT id, owner, namespace, body, status, retired_into, source_job_id, occurrences, occurred_at,"
        f" created_at, updated_at, expires_at, superseded_by FROM memories {where} ORDER BY rowid"
    )
    for row in _stream(conn, sql, params):
        yield MemoryRecord(*row)


def iter_revisions(conn: sqlite3.Connection, owner: str | None) -> Iterator[RevisionRow]:
    """Previous bodies, oldest first (the order they were written in)."""
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


def iter_tombstones(conn: sqlite3.Connection, owner: str | None) -> Iterator[TombstoneRow]:
    """In the order they were forgotten; memories forgotten together in the order they were made."""
    where, params = _where(owner, "f.owner")
    sql = (
        "SELECT f.memory_id, f.owner, f.namespace, f.jobs, f.forgotten_at, m.source_job_id, m.retired_into,"
        " m.occurred_at, m.created_at, m.updated_at FROM forgotten f"
        f" LEFT JOIN memories m ON m.id = f.memory_id AND m.owner = f.owner {where}"
        " ORDER BY f.forgotten_at, m.rowid, f.memory_id"
    )
    for row in _stream(conn, sql, params):
        yield TombstoneRow(*row)
