"""The journal on PostgreSQL: remember jobs, lanes and their leases.

A remember is one INSERT that needs no lock beyond its own row: the unique partial index on
(owner, idempotency_key) settles a race between two calls with one key (the loser reads the
winner's job once it commits). A lane is claimed with `FOR NO KEY UPDATE SKIP LOCKED`, so replicas
looking for work at once never wait on each other and never take the same lane: the row lock
holds while the lease is checked and written, and a lease is free only when it is unheld,
ours, expired, or held by a dead process on this host.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from psycopg import Connection

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
from . import migrations, revisions

log = logging.getLogger(__name__)

JOB_COLUMNS = (
    "id, owner, namespace, text, idempotency_key, status, attempts, decision, memory_id, error, created_at, updated_at,"
    " occurred_at, expires_at, supersedes, source_job_id"
)
_QUEUED_COLUMNS = "seq, id, owner, namespace, lane_id, text, attempts, created_at, occurred_at, expires_at, supersedes"


def job_of(row: Sequence) -> Job:
    """A job from a row of JOB_COLUMNS."""
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


_job = job_of


def ensure_lane(conn: Connection, owner: str, namespace: str) -> int:
    """The lane's id, made if it is new. Read first: an INSERT ... ON CONFLICT on a lane that
    exists waits for whichever transaction holds its row (a curation batch updates the lane's
    totals and lease until it commits), so every remember into a lane being curated would wait
    for the batch."""
    query = "SELECT id FROM lanes WHERE owner = %s AND namespace = %s"
    row = conn.execute(query, (owner, namespace)).fetchone()
    if row is None:
        row = conn.execute(
            "INSERT INTO lanes (owner, namespace) VALUES (%s, %s) ON CONFLICT (owner, namespace) DO NOTHING"
            " RETURNING id",
            (owner, namespace),
        ).fetchone()
    if row is None:  # another replica made it just now
        row = conn.execute(query, (owner, namespace)).fetchone()
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
        return _insert(conn, owner, JobRequest(namespace, text, idempotency_key, occurred_at), now)


def insert_jobs(conn: Connection, owner: str, requests: Sequence[JobRequest], now: float) -> list[tuple[Job, bool]]:
    """All the requests in one transaction, each as insert_job files one; a key already used
    for a job that differs from its request (KeyReused), or a supersedes id that names no live
    memory of the owner, stores nothing."""
    with conn.transaction():
        filed = []
        for index, request in enumerate(requests):
            job, replayed = _insert(conn, owner, request, now, index=index)
            if replayed:
                check_replay(index, request, job)
            filed.append((job, replayed))
        return filed


def insert_analysis(
    conn: Connection, owner: str, namespace: str, text: str, facts: Sequence[JobRequest], now: float
) -> tuple[Job, list[tuple[Job, bool]]]:
    """The analyze request (the source text, kept in the journal and never curated) and the
    facts extracted from it, each a remember job naming it, in one transaction."""
    with conn.transaction():
        lane = ensure_lane(conn, owner, namespace)
        request_id = new_job_id()
        conn.execute(
            "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, status, decision, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, 'done', %s, %s, %s)",
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
    conn: Connection, owner: str, request: JobRequest, now: float, source: str | None = None, index: int = 0
) -> tuple[Job, bool]:
    """Inside the caller's transaction: the job, or the one already filed under its key (True).
    ON CONFLICT DO NOTHING lets a key race lose without aborting the caller's batch. `index`:
    the request's place in its call, named by a refusal."""
    key = request.idempotency_key
    if key is not None:
        known = _by_key(conn, owner, key)
        if known is not None:
            return known, True
    if request.supersedes:
        _lock_memories(conn, owner, request.supersedes)
    for memory_id in request.supersedes:
        check_supersedable(index, memory_id, _state(conn, owner, memory_id), _queued_superseder(conn, owner, memory_id))
    lane = ensure_lane(conn, owner, request.namespace)
    job_id = new_job_id()
    inserted = conn.execute(
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, expires_at,"
        " supersedes, source_job_id, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (owner, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING seq",
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
    ).fetchone()
    if inserted is None:  # another call with the key committed meanwhile
        assert key is not None
        known = _by_key(conn, owner, key)
        assert known is not None  # the conflict was with this row, committed
        return known, True
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


def _lock_memories(conn: Connection, owner: str, memory_ids: Sequence[str]) -> None:
    """Lock the rows until the caller commits, in one order: two replicas filing a supersede of
    one memory at once take turns (never a deadlock), and the second sees the first's queued job."""
    conn.execute(
        "SELECT 1 FROM memories WHERE owner = %s AND id = ANY(%s) ORDER BY id FOR UPDATE", (owner, list(memory_ids))
    )


def _state(conn: Connection, owner: str, memory_id: str) -> MemoryState | None:
    """Another owner's memory is as unknown as one that never existed (the wall says nothing
    about what is behind it)."""
    found = conn.execute(
        "SELECT status, retired_into, superseded_by FROM memories WHERE owner = %s AND id = %s", (owner, memory_id)
    ).fetchone()
    return (found[0], found[1], found[2]) if found else None


def _queued_superseder(conn: Connection, owner: str, memory_id: str) -> str | None:
    """A queued job of the owner that supersedes the memory: among the queued jobs that
    supersede anything, by their index (migration 003), not the owner's whole journal."""
    found = conn.execute(
        "SELECT id FROM remember_jobs WHERE owner = %s AND status = 'queued' AND supersedes IS NOT NULL"
        " AND %s = ANY(string_to_array(supersedes, ',')) LIMIT 1",
        (owner, memory_id),
    ).fetchone()
    return found[0] if found else None


def _by_key(conn: Connection, owner: str, key: str) -> Job | None:
    row = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND idempotency_key = %s", (owner, key)
    ).fetchone()
    return _job(row) if row else None


def jobs_by_id(conn: Connection, owner: str, job_ids: Sequence[str]) -> dict[str, Job]:
    if not job_ids:
        return {}
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND id = ANY(%s)", (owner, list(job_ids))
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
        per_lane.append([queued_job(row) for row in rows])
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
    another claimer is looking at right now (row locked) is skipped, not waited for. None once
    a newer memwal-mcp has migrated the database: its jobs are left queued for it."""
    if _outdated(conn):
        return None
    candidates = conn.execute(
        "SELECT lane_id FROM remember_jobs WHERE status = 'queued' AND next_attempt_at <= %s"
        " GROUP BY lane_id ORDER BY min(seq)",
        (now,),
    ).fetchall()
    for (lane,) in candidates:
        with conn.transaction():
            row = conn.execute(
                # NO KEY UPDATE: a remember's foreign key on the lane (KEY SHARE) does not wait for it.
                "SELECT id, owner, namespace, lease_holder, lease_expires_at FROM lanes WHERE id = %s"
                " FOR NO KEY UPDATE SKIP LOCKED",
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
    """Extend our lease; False if it was lost, or if a newer memwal-mcp has migrated the
    database meanwhile (curation then stops as on a lost lease, before it writes anything,
    instead of failing jobs on tables that changed)."""
    if _outdated(conn):
        return False
    cursor = conn.execute(
        "UPDATE lanes SET lease_expires_at = %s WHERE id = %s AND lease_holder = %s", (until, lane, holder)
    )
    return cursor.rowcount == 1


def _outdated(conn: Connection) -> bool:
    if not migrations.upgraded_since(conn):
        return False
    log.error(
        "a newer memwal-mcp has upgraded this database; this server no longer curates (its jobs stay queued "
        "for the newer version): restart it with the newer memwal-mcp"
    )
    return True


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
    return [queued_job(row) for row in rows]


def mark_done(conn: Connection, job_id: str, decision: str, memory_id: str, now: float) -> None:
    """Call in the transaction that applied the job, so a job erased meanwhile rolls it back.
    The job's expiry and supersedes take effect on the memory it ended in, here, so every way
    curation decides (create, repeat, merge) gives them the same meaning."""
    done = conn.execute(
        "UPDATE remember_jobs SET status = 'done', decision = %s, memory_id = %s, error = NULL, updated_at = %s"
        " WHERE id = %s AND status = 'queued' RETURNING owner, expires_at, supersedes",
        (decision, memory_id, now, job_id),
    ).fetchall()
    if len(done) != 1:
        raise JobWithdrawn(f"job {job_id} left the queue while it was curated; nothing of it is applied")
    owner, expires_at, supersedes = done[0]
    # Each statement matches no row in the common case (no expiry anywhere), so it writes nothing.
    if decision == "created":
        if expires_at is not None:
            conn.execute("UPDATE memories SET expires_at = %s WHERE id = %s", (expires_at, memory_id))
    elif expires_at is None:  # said again without an end: it has none
        conn.execute("UPDATE memories SET expires_at = NULL WHERE id = %s AND expires_at IS NOT NULL", (memory_id,))
    else:  # said again with an end: it holds until the later one
        conn.execute(
            "UPDATE memories SET expires_at = %s WHERE id = %s AND expires_at IS NOT NULL AND expires_at < %s",
            (expires_at, memory_id, expires_at),
        )
    replaced = [other for other in ids_of(supersedes) if other != memory_id]
    superseded = revisions.supersede(conn, owner, replaced, memory_id, job_id, now) if replaced else []
    missed = [other for other in ids_of(supersedes) if other not in superseded]
    if missed:  # superseded, merged or forgotten meanwhile: said on the job, not dropped unseen
        note = not_superseded(memory_id, [(other, _state(conn, owner, other)) for other in missed])
        conn.execute("UPDATE remember_jobs SET error = %s WHERE id = %s", (note, job_id))


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


def journal_counts(conn: Connection, owner: str, first: float) -> list[JournalCount]:
    """One GROUP BY over the owner's journal, read from the index of migrations/postgres/005_journal_counts.sql
    alone (not the rows and their text)."""
    rows = conn.execute(
        "SELECT status, decision, CASE WHEN created_at >= %s THEN floor((created_at - %s) / 86400)::bigint END AS day, count(*)"
        " FROM remember_jobs WHERE owner = %s GROUP BY status, decision, day",
        (first, first, owner),
    ).fetchall()
    return [
        JournalCount(status, decision, None if day is None else int(day), int(count))
        for status, decision, day, count in rows
    ]


def jobs_for_memories(conn: Connection, owner: str, memory_ids: Sequence[str]) -> list[Job]:
    if not memory_ids:
        return []
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND memory_id = ANY(%s)"
        " ORDER BY created_at DESC, seq DESC",
        (owner, list(memory_ids)),
    ).fetchall()
    return [_job(row) for row in rows]


def extracted_from(conn: Connection, owner: str, request_id: str) -> list[Job]:
    """The owner's jobs whose source_job_id is that analyze request, in the order filed."""
    rows = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM remember_jobs WHERE owner = %s AND source_job_id = %s ORDER BY seq",
        (owner, request_id),
    ).fetchall()
    return [_job(row) for row in rows]
