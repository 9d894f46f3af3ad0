"""Is the store consistent? Every rule the write path keeps, checked in one read snapshot.

The journal (remember_jobs) is the source of truth and memories are derived from it,
so most rules say "this job and that memory agree": a done job names a memory of its
own lane, a 'created' job is its memory's source, a forgotten job's memory is
forgotten, every live memory has its full-text row (and its vector row once
embedded), nothing points across lanes, and nothing indexes what is gone.

`find_problems` returns one Problem per broken row (capped per code), naming the
table and the row's public id. Severity: error = the store breaks a rule; warning =
the store is valid but something needs attention (old queue, failed jobs);
info = worth knowing, nothing to do (memories still waiting for their vector).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..records import Problem, StoreCounts
from . import fts
from .integrity_common import _capped, _table_exists
from .integrity_indexes import _full_text_rows, _vector_meta, _vector_rows, _vector_tables
from .integrity_journal import (
    _created_jobs_not_the_source,
    _done_jobs_without_memory,
    _forgotten_jobs_not_erased,
    _jobs_of_forgotten_memories,
    _jobs_with_unknown_decision,
    _memories_created_twice,
    _merges_without_revision,
    _repeats_that_are_the_source,
    _stale_or_failed_queues,
)
from .integrity_lane_files import lane_files
from .integrity_memories import (
    _forgotten_leftovers,
    _memories_without_their_source,
    _occurrence_counts,
    _retirements,
    _revisions,
)
from .integrity_owners import (
    _jobs_in_another_lanes_memory,
    _jobs_outside_their_lane,
    _lane_live_counts,
    _memories_outside_their_lane,
)

# --- SQLite itself ------------------------------------------------------------------


def _load_fts_structures(conn: sqlite3.Connection) -> None:
    """Make each FTS5 table read its index structure in this transaction. A connection that
    read a table before another connection wrote to it keeps the old structure cached, and
    `PRAGMA integrity_check` inside a transaction compares the index with that stale copy:
    "malformed inverted index" for a sound table (SQLite 3.50). One MATCH refreshes it."""
    if not _table_exists(conn, "lane_fts"):
        return
    for name in fts.tables(conn).values():
        conn.execute(f"SELECT rowid FROM {name} WHERE {name} MATCH 'memwalstructureprobe' LIMIT 1").fetchall()


def _sqlite_integrity(conn: sqlite3.Connection) -> Iterator[Problem]:
    # Since SQLite 3.44 this also verifies FTS5 indexes (their xIntegrity method).
    _load_fts_structures(conn)
    rows = [(r[0],) for r in conn.execute("PRAGMA integrity_check").fetchall() if r[0] != "ok"]
    yield from _capped(rows, lambda message: Problem("error", "sqlite_integrity", message, "sqlite"))
    rows = conn.execute("PRAGMA foreign_key_check").fetchall()
    yield from _capped(
        rows,
        lambda table, rowid, parent, _fk: Problem(
            "error", "foreign_key_violation", f"rowid {rowid} points at a missing {parent} row", table, str(rowid)
        ),
    )


CHECKS: tuple[Callable[[sqlite3.Connection], Iterable[Problem]], ...] = (
    _sqlite_integrity,
    _jobs_outside_their_lane,
    _memories_outside_their_lane,
    _done_jobs_without_memory,
    _jobs_with_unknown_decision,
    _jobs_in_another_lanes_memory,
    _created_jobs_not_the_source,
    _memories_created_twice,
    _repeats_that_are_the_source,
    _merges_without_revision,
    _forgotten_jobs_not_erased,
    _jobs_of_forgotten_memories,
    _memories_without_their_source,
    _occurrence_counts,
    _retirements,
    _forgotten_leftovers,
    _lane_live_counts,
    _full_text_rows,
    _vector_tables,
    _vector_rows,
    _revisions,
)


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction, so a server writing meanwhile cannot cause false alarms."""
    if conn.in_transaction:  # the caller's transaction is the snapshot
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")  # nothing was written


def find_problems(conn: sqlite3.Connection, now: float | None = None, *, repair: bool = False) -> list[Problem]:
    """Every rule, checked in one snapshot; errors first, then warnings, then info. With
    `repair`, a damaged lane sidecar (derived data outside the database) is also deleted, so
    it is rebuilt: `memwal-mcp check` repairs, doctor and a backup's verification do not."""
    now = time.time() if now is None else now
    problems: list[Problem] = []
    with _snapshot(conn):
        for check in CHECKS:
            problems.extend(check(conn))
        problems.extend(_stale_or_failed_queues(conn, now))
        problems.extend(lane_files(conn, repair))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(problems, key=lambda p: order[p.severity])  # stable: check order within a severity


def store_counts(conn: sqlite3.Connection) -> StoreCounts:
    lanes = conn.execute("SELECT COUNT(*) FROM lanes").fetchone()[0]
    jobs = dict(conn.execute("SELECT status, COUNT(*) FROM remember_jobs GROUP BY status").fetchall())
    memories = dict(conn.execute("SELECT status, COUNT(*) FROM memories GROUP BY status").fetchall())
    meta, vectors = _vector_meta(conn), 0
    if meta is not None and _table_exists(conn, meta[1]):
        vectors = conn.execute(f"SELECT COUNT(*) FROM {meta[1]}").fetchone()[0]
    revisions = conn.execute("SELECT COUNT(*) FROM memory_revisions").fetchone()[0]
    return StoreCounts(lanes, jobs, memories, vectors, revisions)


def check_store(conn: sqlite3.Connection, *, repair: bool = False) -> tuple[list[Problem], StoreCounts]:
    """Problems and counts from one snapshot: what `memwal-mcp check` reports (see find_problems)."""
    with _snapshot(conn):
        return find_problems(conn, repair=repair), store_counts(conn)


def created_at(conn: sqlite3.Connection) -> float | None:
    """When the first migration ran: when this database file was set up."""
    if not _table_exists(conn, "schema_migrations"):
        return None
    return conn.execute("SELECT MIN(applied_at) FROM schema_migrations").fetchone()[0]
