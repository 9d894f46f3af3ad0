"""The journal on PostgreSQL: remember jobs, lanes and their leases.

A remember is one INSERT that needs no lock beyond its own row: the unique partial index on
(owner, idempotency_key) settles a race between two calls with one key (the loser reads the
winner's job once it commits). A lane is claimed with `FOR UPDATE SKIP LOCKED`, so replicas
looking for work at once never wait on each other and never take the same lane: the row lock
holds while the lease is checked and written, and a lease is free only when it is unheld,
ours, expired, or held by a dead process on this host.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from psycopg import Connection

from ...records import Job
from ..leases import holder_is_dead
from ..records import JobWithdrawn, Lane, QueuedJob

_JOB_COLUMNS = (
    "id, owner, namespace, text, idempotency_key, status, attempts, decision, memory_id, error, created_at, updated_at,"
    " occurred_at"
)
_QUEUED_COLUMNS = "seq, id, owner, namespace, lane_id, text, attempts, created_at, occurred_at"


def _job(row: Sequence) -> Job:
    return Job(*row)


def new_job_id() -> str:
    return "j_" + secrets.token_hex(8)


def ensure_lane(conn: Connection, owner: str, namespace: str) -> int:
    row = conn.execute(
        "INSERT INTO lanes (owner, namespace) VALUES (%s, %s) ON CONFLICT (owner, namespace) DO NOTHING RETURNING id",
        (owner, namespace),
    ).fetchone()
    if row is None:
        row = conn.execute("SELECT id FROM lanes WHERE owner = %s AND namespace = %s", (owner, namespace)).fetchone()
    assert row is not None  # inserted, or there before
    return int(row[0])


def owner_lanes(conn: Connection, owner: str) -> list[Lane]:
    rows = conn.execute("SELECT id, owner, namespace FROM lanes WHERE owner = %s ORDER BY id", (owner,)).fetchall()
    return [Lane(*row) for row in rows]


def live_count(conn: Connection, lane: int) -> int:
    row = conn.execute("SELECT live_count FROM lanes WHERE id = %s", (lane,)).fetchone()
    return int(row[0]) if row else 0


def insert_job(
    conn: Connection,
    owner: str,
    namespace: str,
    text: str,
    idempotency_key: str | None,
    now: float,
    occurred_at: float | None = None,
) -> tuple[Job, bool]:
    """Insert a job, or return the job already filed under (owner, key). Returns (job, replayed)."""
    with conn.transaction():
        if idempotency_key is not None:
            known = _by_key(conn, owner, idempotency_key)
            if known is not None:
                return known, True
        lane = ensure_lane(conn, owner, namespace)
        job_id = new_job_id()
        inserted = conn.execute(
            "INSERT INTO remember_jobs"
            " (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (owner, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING seq",
            (job_id, owner, namespace, lane, text, idempotency_key, occurred_at, now, now),
        ).fetchone()
        if inserted is None:  # another call with the key committed meanwhile
            assert idempotency_key is not None
            known = _by_key(conn, owner, idempotency_key)
            assert known is not None  # the conflict was with this row, committed
            return known, True
    job = Job(job_id, owner, namespace, text, idempotency_key, "queued", 0, None, None, None, now, now, occurred_at)
    return job, False


def _by_key(conn: Connection, owner: str, key: str) -> Job | None:
    row = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND idempotency_key = %s", (owner, key)
    ).fetchone()
    return _job(row) if row else None


def jobs_by_id(conn: Connection, owner: str, job_ids: Sequence[str]) -> dict[str, Job]:
    if not job_ids:
        return {}
    rows = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND id = ANY(%s)", (owner, list(job_ids))
    ).fetchall()
    return {row[0]: _job(row) for row in rows}


def still_queued(conn: Connection, job_ids: Sequence[str]) -> set[str]:
    if not job_ids:
        return set()
    rows = conn.execute(
        "SELECT id FROM remember_jobs WHERE status = 'queued' AND id = ANY(%s)", (list(job_ids),)
    ).fetchall()
    return {row[0] for row in rows}


def queued_mark(conn: Connection, lanes: Sequence[int]) -> int | None:
    row = conn.execute(
        "SELECT max(seq) FROM remember_jobs WHERE lane_id = ANY(%s) AND status = 'queued'", (list(lanes),)
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def queued_through(conn: Connection, lanes: Sequence[int], mark: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM remember_jobs WHERE lane_id = ANY(%s) AND status = 'queued' AND seq <= %s LIMIT 1",
        (list(lanes), mark),
    ).fetchone()
    return row is not None


def queued_fairly(conn: Connection, lanes: Sequence[int], max_chars: int, max_jobs: int) -> list[QueuedJob]:
    """Queued jobs of these lanes, newest first within each lane, taken from the lanes in turn
    until `max_chars` of text or `max_jobs` jobs (a backlog in one namespace cannot crowd the
    few queued facts of another out of a recall)."""
    per_lane: list[list[QueuedJob]] = []
    for lane in lanes:
        rows = conn.execute(
            f"SELECT {_QUEUED_COLUMNS} FROM remember_jobs WHERE lane_id = %s AND status = 'queued'"
            " ORDER BY seq DESC LIMIT %s",
            (lane, max_jobs),
        ).fetchall()
        per_lane.append([QueuedJob(*row) for row in rows])
    taken: list[QueuedJob] = []
    chars = 0
    depth = 0
    while chars < max_chars and len(taken) < max_jobs and any(depth < len(jobs) for jobs in per_lane):
        for jobs in per_lane:
            if depth >= len(jobs):
                continue
            taken.append(jobs[depth])
            chars += len(jobs[depth].text)
            if chars >= max_chars or len(taken) >= max_jobs:
                break
        depth += 1
    return taken


def has_due_jobs(conn: Connection, now: float) -> bool:
    row = conn.execute(
        "SELECT 1 FROM remember_jobs WHERE status = 'queued' AND next_attempt_at <= %s LIMIT 1", (now,)
    ).fetchone()
    return row is not None


def claim_lane(conn: Connection, holder: str, lease_s: float, now: float) -> Lane | None:
    """Lease one lane that has due jobs and no live lease; the oldest waiting work first. A lane
    another claimer is looking at right now (row locked) is skipped, not waited for."""
    candidates = conn.execute(
        "SELECT lane_id FROM remember_jobs WHERE status = 'queued' AND next_attempt_at <= %s"
        " GROUP BY lane_id ORDER BY min(seq)",
        (now,),
    ).fetchall()
    for (lane,) in candidates:
        with conn.transaction():
            row = conn.execute(
                "SELECT id, owner, namespace, lease_holder, lease_expires_at FROM lanes WHERE id = %s"
                " FOR UPDATE SKIP LOCKED",
                (lane,),
            ).fetchone()
            if row is None:
                continue
            _, owner, namespace, current, expires = row
            if current is None or current == holder or (expires or 0) <= now or holder_is_dead(current):
                conn.execute(
                    "UPDATE lanes SET lease_holder = %s, lease_expires_at = %s WHERE id = %s",
                    (holder, now + lease_s, lane),
                )
                return Lane(int(lane), owner, namespace)
    return None


def renew_lease(conn: Connection, lane: int, holder: str, until: float) -> bool:
    cursor = conn.execute(
        "UPDATE lanes SET lease_expires_at = %s WHERE id = %s AND lease_holder = %s", (until, lane, holder)
    )
    return cursor.rowcount == 1


def release_lease(conn: Connection, lane: int, holder: str) -> None:
    conn.execute(
        "UPDATE lanes SET lease_holder = NULL, lease_expires_at = NULL WHERE id = %s AND lease_holder = %s",
        (lane, holder),
    )


def next_batch(conn: Connection, lane: int, limit: int, now: float, after_seq: int = 0) -> list[QueuedJob]:
    rows = conn.execute(
        f"SELECT {_QUEUED_COLUMNS} FROM remember_jobs"
        " WHERE lane_id = %s AND status = 'queued' AND next_attempt_at <= %s AND seq > %s ORDER BY seq LIMIT %s",
        (lane, now, after_seq, limit),
    ).fetchall()
    return [QueuedJob(*row) for row in rows]


def mark_done(conn: Connection, job_id: str, decision: str, memory_id: str, now: float) -> None:
    done = conn.execute(
        "UPDATE remember_jobs SET status = 'done', decision = %s, memory_id = %s, error = NULL, updated_at = %s"
        " WHERE id = %s AND status = 'queued'",
        (decision, memory_id, now, job_id),
    ).rowcount
    if done != 1:
        raise JobWithdrawn(f"job {job_id} left the queue while it was curated; nothing of it is applied")


def mark_attempt_failed(conn: Connection, job_id: str, error: str, retry_at: float | None, now: float) -> None:
    if retry_at is None:
        conn.execute(
            "UPDATE remember_jobs SET status = 'failed', attempts = attempts + 1, error = %s, updated_at = %s"
            " WHERE id = %s AND status = 'queued'",
            (error, now, job_id),
        )
    else:
        conn.execute(
            "UPDATE remember_jobs SET attempts = attempts + 1, error = %s, next_attempt_at = %s, updated_at = %s"
            " WHERE id = %s AND status = 'queued'",
            (error, retry_at, now, job_id),
        )


def queue_counts(conn: Connection) -> dict[str, int]:
    rows = conn.execute("SELECT status, count(*) FROM remember_jobs GROUP BY status").fetchall()
    return {status: int(count) for status, count in rows}


def jobs_for_memories(conn: Connection, owner: str, memory_ids: Sequence[str]) -> list[Job]:
    if not memory_ids:
        return []
    rows = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND memory_id = ANY(%s)"
        " ORDER BY created_at DESC, seq DESC",
        (owner, list(memory_ids)),
    ).fetchall()
    return [_job(row) for row in rows]
