"""The journal: remember jobs, lanes and their leases."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from ...records import ANALYZED, Job
from ..leases import holder_is_dead
from ..records import (
    JobRequest,
    JobWithdrawn,
    JournalCount,
    Lane,
    MemoryState,
    QueuedJob,
    check_replay,
    check_supersedable,
    ids_of,
    new_job_id,
    not_superseded,
    queued_job,
)
from . import fts, migrations, revisions
from .database import transaction

log = logging.getLogger(__name__)

JOB_COLUMNS = (
    "id, owner, namespace, text, idempotency_key, status, attempts, decision, memory_id, error, created_at, updated_at,"
    " occurred_at, expires_at, supersedes, source_job_id"
)


def _job(row: Sequence) -> Job:
    (job_id, owner, namespace, text, key, status, attempts, decision, memory_id, error) = row[:10]
    created_at, updated_at, occurred_at, expires_at, supersedes, source = row[10:]
    return Job(
        job_id,
        owner,
        namespace,
        text,
        key,
        status,
        attempts,
        decision,
        memory_id,
        error,
        created_at,
        updated_at,
        occurred_at,
        expires_at,
        ids_of(supersedes),
        source,
    )


def job_of(row: Sequence) -> Job:
    """A job from a row of JOB_COLUMNS."""
    return _job(row)


def ensure_lane(conn: sqlite3.Connection, owner: str, namespace: str) -> int:
    row = conn.execute("SELECT id FROM lanes WHERE owner = ? AND namespace = ?", (owner, namespace)).fetchone()
    if row:
        return row[0]
    lane = conn.execute("INSERT INTO lanes (owner, namespace) VALUES (?, ?)", (owner, namespace)).lastrowid
    assert lane is not None  # an INSERT always sets it
    fts.create(conn, lane)
    return lane


def lane_id(conn: sqlite3.Connection, owner: str, namespace: str) -> int | None:
    row = conn.execute("SELECT id FROM lanes WHERE owner = ? AND namespace = ?", (owner, namespace)).fetchone()
    return row[0] if row else None


def owner_lanes(conn: sqlite3.Connection, owner: str) -> list[Lane]:
    rows = conn.execute("SELECT id, owner, namespace FROM lanes WHERE owner = ? ORDER BY id", (owner,)).fetchall()
    return [Lane(*row) for row in rows]


def live_count(conn: sqlite3.Connection, lane: int) -> int:
    """Live memories in the lane, from the count the memory triggers keep (migration 009)."""
    row = conn.execute("SELECT live_count FROM lanes WHERE id = ?", (lane,)).fetchone()
    return row[0] if row else 0


def insert_job(
    conn: sqlite3.Connection,
    owner: str,
    namespace: str,
    text: str,
    idempotency_key: str | None,
    now: float,
    occurred_at: float | None = None,
) -> tuple[Job, bool]:
    """Insert a job, or return the job already filed under (owner, key). Returns (job, replayed)."""
    with transaction(conn):
        return _insert(conn, owner, JobRequest(namespace, text, idempotency_key, occurred_at), now)


def insert_jobs(
    conn: sqlite3.Connection, owner: str, requests: Sequence[JobRequest], now: float
) -> list[tuple[Job, bool]]:
    """All the requests in one transaction, each as insert_job files one; a key already used
    for a job that differs from its request (KeyReused), or a supersedes id that names no live
    memory of the owner, stores nothing."""
    with transaction(conn):
        filed = []
        for index, request in enumerate(requests):
            job, replayed = _insert(conn, owner, request, now, index=index)
            if replayed:
                check_replay(index, request, job)
            filed.append((job, replayed))
        return filed


def insert_analysis(
    conn: sqlite3.Connection, owner: str, namespace: str, text: str, facts: Sequence[JobRequest], now: float
) -> tuple[Job, list[tuple[Job, bool]]]:
    """The analyze request (the source text, kept in the journal and never curated) and the
    facts extracted from it, each a remember job naming it, in one transaction."""
    with transaction(conn):
        lane = ensure_lane(conn, owner, namespace)
        request_id = new_job_id()
        conn.execute(
            "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, status, decision, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?)",
            (request_id, owner, namespace, lane, text, ANALYZED, now, now),
        )
        request = Job(request_id, owner, namespace, text, None, "done", 0, ANALYZED, None, None, now, now)
        filed = []
        for index, fact in enumerate(facts):
            job, replayed = _insert(conn, owner, fact, now, source=request_id)
            if replayed:
                check_replay(index, fact, job)
            filed.append((job, replayed))
        return request, filed


def _insert(
    conn: sqlite3.Connection, owner: str, request: JobRequest, now: float, source: str | None = None, index: int = 0
) -> tuple[Job, bool]:
    """Inside the caller's transaction: the job, or the one already filed under its key (True).
    `index`: the request's place in its call, named by a refusal."""
    key = request.idempotency_key
    if key is not None:
        row = conn.execute(
            f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = ? AND idempotency_key = ?", (owner, key)
        ).fetchone()
        if row and row[7] == "forgotten":
            # Erased before forget released keys (older versions): its text is gone, so the
            # key names nothing kept any more; this call files the fact anew.
            conn.execute("UPDATE remember_jobs SET idempotency_key = NULL WHERE id = ?", (row[0],))
        elif row:
            return _job(row), True
    for memory_id in request.supersedes:
        check_supersedable(index, memory_id, _state(conn, owner, memory_id), _queued_superseder(conn, owner, memory_id))
    lane = ensure_lane(conn, owner, request.namespace)
    job_id = new_job_id()
    conn.execute(
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, expires_at,"
        " supersedes, source_job_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            job_id,
            owner,
            request.namespace,
            lane,
            request.text,
            key,
            request.occurred_at,
            request.expires_at,
            ",".join(request.supersedes) or None,
            source,
            now,
            now,
        ),
    )
    job = Job(
        job_id,
        owner,
        request.namespace,
        request.text,
        key,
        "queued",
        0,
        None,
        None,
        None,
        now,
        now,
        request.occurred_at,
        request.expires_at,
        request.supersedes,
        source,
    )
    return job, False


def _state(conn: sqlite3.Connection, owner: str, memory_id: str) -> MemoryState | None:
    """Another owner's memory is as unknown as one that never existed (the wall says nothing
    about what is behind it)."""
    row = conn.execute(
        "SELECT status, retired_into, superseded_by FROM memories WHERE owner = ? AND id = ?", (owner, memory_id)
    ).fetchone()
    return (row[0], row[1], row[2]) if row else None


def _queued_superseder(conn: sqlite3.Connection, owner: str, memory_id: str) -> str | None:
    """A queued job of the owner that supersedes the memory: among the queued jobs that
    supersede anything, by their index (migration 013), not the whole queue."""
    row = conn.execute(
        "SELECT id FROM remember_jobs WHERE owner = ? AND status = 'queued' AND supersedes IS NOT NULL"
        " AND instr(',' || supersedes || ',', ',' || ? || ',') > 0 LIMIT 1",
        (owner, memory_id),
    ).fetchone()
    return row[0] if row else None


def jobs_by_id(conn: sqlite3.Connection, owner: str, job_ids: Sequence[str]) -> dict[str, Job]:
    """The owner's jobs among `job_ids`; ids of other owners are simply absent."""
    if not job_ids:
        return {}
    marks = ",".join("?" * len(job_ids))
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = ? AND id IN ({marks})", (owner, *job_ids)
    ).fetchall()
    return {row[0]: _job(row) for row in rows}


def still_queued(conn: sqlite3.Connection, job_ids: Sequence[str]) -> set[str]:
    """Those of `job_ids` not curated (nor erased) yet."""
    found: set[str] = set()
    ids = list(job_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(
            job_id
            for (job_id,) in conn.execute(
                f"SELECT id FROM remember_jobs WHERE status = 'queued' AND id IN ({','.join('?' * len(chunk))})", chunk
            )
        )
    return found


_QUEUED_COLUMNS = "seq, id, owner, namespace, lane_id, text, attempts, created_at, occurred_at, expires_at, supersedes"


def queued_mark(conn: sqlite3.Connection, lanes: Sequence[int]) -> int | None:
    """The arrival number of the newest job still queued in these lanes; None when none is."""
    newest = [
        seq
        for lane in lanes
        for (seq,) in conn.execute(
            "SELECT MAX(seq) FROM remember_jobs WHERE lane_id = ? AND status = 'queued'", (lane,)
        )
        if seq is not None
    ]
    return max(newest) if newest else None


def queued_through(conn: sqlite3.Connection, lanes: Sequence[int], mark: int) -> bool:
    """True while a job that arrived no later than `mark` is still queued in these lanes."""
    return any(
        conn.execute(
            "SELECT 1 FROM remember_jobs WHERE lane_id = ? AND status = 'queued' AND seq <= ? LIMIT 1", (lane, mark)
        ).fetchone()
        for lane in lanes
    )


def queued_fairly(conn: sqlite3.Connection, lanes: Sequence[int], max_chars: int, max_jobs: int) -> list[QueuedJob]:
    """Queued jobs of these lanes, newest first within each lane, taken from the lanes in turn
    until `max_chars` of text or `max_jobs` jobs: a backlog in one namespace cannot crowd the
    few queued facts of another out of a recall."""
    cursors = [
        conn.execute(
            f"SELECT {_QUEUED_COLUMNS} FROM remember_jobs WHERE lane_id = ? AND status = 'queued' ORDER BY seq DESC",
            (lane,),
        )
        for lane in lanes
    ]
    taken: list[QueuedJob] = []
    chars = 0
    while cursors and chars < max_chars and len(taken) < max_jobs:
        for cursor in list(cursors):
            row = cursor.fetchone()
            if row is None:
                cursors.remove(cursor)
                continue
            job = queued_job(row)
            taken.append(job)
            chars += len(job.text)
            if chars >= max_chars or len(taken) >= max_jobs:
                break
    for cursor in cursors:
        cursor.close()
    return taken


# --- leases ---------------------------------------------------------------


def has_due_jobs(conn: sqlite3.Connection, now: float) -> bool:
    """A lock-free look before claim_lane, so idle workers never take the write lock."""
    row = conn.execute(
        "SELECT 1 FROM remember_jobs WHERE status = 'queued' AND next_attempt_at <= ? LIMIT 1", (now,)
    ).fetchone()
    return row is not None


def claim_lane(conn: sqlite3.Connection, holder: str, lease_s: float, now: float) -> Lane | None:
    """Lease one lane that has due jobs and no live lease; the oldest waiting work first.
    None once a newer memwal-mcp has migrated the file: its jobs are left queued for it."""
    with transaction(conn):
        if _outdated(conn):
            return None
        rows = conn.execute(
            "SELECT l.id, l.owner, l.namespace, l.lease_holder, l.lease_expires_at"
            " FROM (SELECT lane_id, MIN(seq) AS first FROM remember_jobs"
            "       WHERE status = 'queued' AND next_attempt_at <= ? GROUP BY lane_id) q"
            " JOIN lanes l ON l.id = q.lane_id ORDER BY q.first",
            (now,),
        ).fetchall()
        for lane, owner, namespace, current, expires in rows:
            free = current is None or current == holder or (expires or 0) <= now or holder_is_dead(current)
            if free:
                conn.execute(
                    "UPDATE lanes SET lease_holder = ?, lease_expires_at = ? WHERE id = ?",
                    (holder, now + lease_s, lane),
                )
                return Lane(lane, owner, namespace)
    return None


def renew_lease(conn: sqlite3.Connection, lane: int, holder: str, until: float) -> bool:
    """Extend our lease; False if it was lost (expired and taken by another worker), or if a
    newer memwal-mcp has migrated the file meanwhile (curation then stops as on a lost lease,
    before it writes anything, instead of failing jobs on tables that changed)."""
    if _outdated(conn):
        return False
    cursor = conn.execute(
        "UPDATE lanes SET lease_expires_at = ? WHERE id = ? AND lease_holder = ?", (until, lane, holder)
    )
    return cursor.rowcount == 1


def _outdated(conn: sqlite3.Connection) -> bool:
    if not migrations.upgraded_since(conn):
        return False
    log.error(
        "a newer memwal-mcp has upgraded this database; this server no longer curates (its jobs stay queued "
        "for the newer version): restart it with the newer memwal-mcp"
    )
    return True


def release_lease(conn: sqlite3.Connection, lane: int, holder: str) -> None:
    conn.execute(
        "UPDATE lanes SET lease_holder = NULL, lease_expires_at = NULL WHERE id = ? AND lease_holder = ?",
        (lane, holder),
    )


def next_batch(conn: sqlite3.Connection, lane: int, limit: int, now: float, after_seq: int = 0) -> list[QueuedJob]:
    """Due queued jobs of the lane in arrival order, after `after_seq` (the batch being worked on)."""
    rows = conn.execute(
        f"SELECT {_QUEUED_COLUMNS} FROM remember_jobs"
        " WHERE lane_id = ? AND status = 'queued' AND next_attempt_at <= ? AND seq > ? ORDER BY seq LIMIT ?",
        (lane, now, after_seq, limit),
    ).fetchall()
    return [queued_job(row) for row in rows]


def mark_done(conn: sqlite3.Connection, job_id: str, decision: str, memory_id: str, now: float) -> None:
    """Call in the transaction that applied the job, so a job erased meanwhile rolls it back.

    The job's expiry and supersedes take effect on the memory it ended in, here, so every way
    curation decides (create, repeat, merge) gives them the same meaning."""
    done = conn.execute(
        "UPDATE remember_jobs SET status = 'done', decision = ?, memory_id = ?, error = NULL, updated_at = ?"
        " WHERE id = ? AND status = 'queued' RETURNING owner, expires_at, supersedes",
        (decision, memory_id, now, job_id),
    ).fetchall()
    if len(done) != 1:
        raise JobWithdrawn(f"job {job_id} left the queue while it was curated; nothing of it is applied")
    owner, expires_at, supersedes = done[0]
    # Each statement matches no row in the common case (no expiry anywhere), so it writes nothing.
    if decision == "created":
        if expires_at is not None:
            conn.execute("UPDATE memories SET expires_at = ? WHERE id = ?", (expires_at, memory_id))
    elif expires_at is None:  # said again without an end: it has none
        conn.execute("UPDATE memories SET expires_at = NULL WHERE id = ? AND expires_at IS NOT NULL", (memory_id,))
    else:  # said again with an end: it holds until the later one
        conn.execute(
            "UPDATE memories SET expires_at = ? WHERE id = ? AND expires_at IS NOT NULL AND expires_at < ?",
            (expires_at, memory_id, expires_at),
        )
    replaced = [other for other in ids_of(supersedes) if other != memory_id]
    superseded = revisions.supersede(conn, owner, replaced, memory_id, job_id, now) if replaced else []
    missed = [other for other in ids_of(supersedes) if other not in superseded]
    if missed:  # superseded, merged or forgotten meanwhile: said on the job, not dropped unseen
        note = not_superseded(memory_id, [(other, _state(conn, owner, other)) for other in missed])
        conn.execute("UPDATE remember_jobs SET error = ? WHERE id = ?", (note, job_id))


def mark_attempt_failed(conn: sqlite3.Connection, job_id: str, error: str, retry_at: float | None, now: float) -> None:
    """Record a failed attempt: back to the queue at `retry_at`, or failed for good when None."""
    if retry_at is None:
        conn.execute(
            "UPDATE remember_jobs SET status = 'failed', attempts = attempts + 1, error = ?, updated_at = ?"
            " WHERE id = ? AND status = 'queued'",
            (error, now, job_id),
        )
    else:
        conn.execute(
            "UPDATE remember_jobs SET attempts = attempts + 1, error = ?, next_attempt_at = ?, updated_at = ?"
            " WHERE id = ? AND status = 'queued'",
            (error, retry_at, now, job_id),
        )


def queue_counts(conn: sqlite3.Connection) -> dict[str, int]:
    rows = conn.execute("SELECT status, COUNT(*) FROM remember_jobs GROUP BY status").fetchall()
    return {status: count for status, count in rows}


def journal_counts(conn: sqlite3.Connection, owner: str, first: float) -> list[JournalCount]:
    """One GROUP BY over the owner's journal, read from the index of migrations/sqlite/014_journal_counts.sql
    alone (not the rows and their text)."""
    rows = conn.execute(
        "SELECT status, decision, CASE WHEN created_at >= ? THEN CAST((created_at - ?) / 86400 AS INTEGER) END AS day, count(*)"
        " FROM remember_jobs WHERE owner = ? GROUP BY status, decision, day",
        (first, first, owner),
    ).fetchall()
    return [
        JournalCount(status, decision, None if day is None else int(day), int(count))
        for status, decision, day, count in rows
    ]


def jobs_for_memories(conn: sqlite3.Connection, owner: str, memory_ids: Sequence[str]) -> list[Job]:
    """The owner's jobs that ended in these memories, newest first."""
    if not memory_ids:
        return []
    marks = ",".join("?" * len(memory_ids))
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = ? AND memory_id IN ({marks})"
        " ORDER BY created_at DESC, seq DESC",
        (owner, *memory_ids),
    ).fetchall()
    return [_job(row) for row in rows]


def extracted_from(conn: sqlite3.Connection, owner: str, request_id: str) -> list[Job]:
    """The owner's jobs whose source_job_id is that analyze request, in the order filed."""
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = ? AND source_job_id = ? ORDER BY seq",
        (owner, request_id),
    ).fetchall()
    return [_job(row) for row in rows]
