"""Apply evaluator decisions to the store, one job per transaction, in arrival order.

Runs on the database's writer thread. Each job's evaluate + apply + mark-done
commits together, after renewing the lane lease inside the same transaction: a
worker that lost its lease stops before writing, so two workers never curate one
lane at once, and a crash leaves every job either done once or still queued.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..normalize import norm_key
from ..store import jobs as job_store
from ..store import memories
from ..store.database import transaction
from .evaluator import Decision, evaluate

log = logging.getLogger("memwal_mcp.curation")


@dataclass(frozen=True, slots=True)
class Applied:
    job_id: str
    decision: str
    memory_id: str


_DONE_DECISION = {"create": "created", "occurrence": "occurrence"}


class LeaseLost(Exception):
    """Another worker owns the lane now; stop without writing."""


def curate_jobs(
    conn: sqlite3.Connection,
    *,
    lane: int,
    holder: str,
    lease_s: float,
    batch: Sequence[job_store.QueuedJob],
    vectors: dict[str, np.ndarray],
    model_id: str | None,
    curation_enabled: bool,
    max_attempts: int,
) -> list[Applied]:
    applied: list[Applied] = []
    for job in batch:
        now = time.time()
        try:
            with transaction(conn):
                if not job_store.renew_lease(conn, lane, holder, now + lease_s):
                    raise LeaseLost(f"lease on lane {lane} lost")
                decision = evaluate(conn, lane, job.text, curation_enabled)
                memory_id, markers = _apply(conn, job, decision, vectors.get(job.id), model_id, now)
                job_store.mark_done(conn, job.id, _DONE_DECISION[decision.action], memory_id, now)
                memories.bump_counters(conn, markers)
        except LeaseLost:
            raise
        except Exception as exc:  # one bad job must not stall its lane: retry it later
            log.exception("curation of job %s failed", job.id)
            record_failures(conn, [job], f"{type(exc).__name__}: {exc}", max_attempts)
            continue
        for marker in markers:
            log.info("%s job=%s memory=%s reason=%s", marker, job.id, memory_id, decision.reason)
        applied.append(Applied(job.id, decision.action, memory_id))
    return applied


def _apply(
    conn: sqlite3.Connection,
    job: job_store.QueuedJob,
    decision: Decision,
    vector: np.ndarray | None,
    model_id: str | None,
    now: float,
) -> tuple[str, list[str]]:
    if decision.action == "occurrence":
        assert decision.target_rowid is not None and decision.target_id is not None
        memories.add_occurrence(conn, decision.target_rowid, now)
        return decision.target_id, ["curation_occurrence"]
    _, memory_id = memories.create_memory(
        conn,
        owner=job.owner,
        namespace=job.namespace,
        lane=job.lane_id,
        body=job.text,
        key=norm_key(job.text),
        source_job_id=job.id,
        vector=vector,
        model_id=model_id,
        now=now,
    )
    markers = ["curation_created"]
    if vector is None:
        markers.append("curation_created_without_vector")
    return memory_id, markers


def needs_vector(conn: sqlite3.Connection, lane: int, batch: Sequence[job_store.QueuedJob], curation_enabled: bool) -> list[str]:
    """Ids of the jobs that may create a memory (so need a vector): not exact repeats."""
    if not curation_enabled:
        return [job.id for job in batch]
    keys = {job.id: norm_key(job.text) for job in batch}
    existing = memories.live_norm_keys(conn, lane, keys.values())
    wanted: list[str] = []
    seen: set[str] = set()
    for job in batch:
        key = keys[job.id]
        if key not in existing and key not in seen:
            wanted.append(job.id)
        seen.add(key)
    return wanted


def retry_delay_s(attempts_so_far: int) -> float:
    """Exponential backoff: 0.5 s, 1 s, 2 s, ... capped at a minute."""
    return min(60.0, 0.5 * 2**attempts_so_far)


def record_failures(
    conn: sqlite3.Connection, batch: Sequence[job_store.QueuedJob], error: str, max_attempts: int
) -> None:
    """Count a failed attempt for each job: back to the queue with backoff, or failed for good."""
    now = time.time()
    with transaction(conn):
        for job in batch:
            final = job.attempts + 1 >= max_attempts
            retry_at = None if final else now + retry_delay_s(job.attempts)
            job_store.mark_attempt_failed(conn, job.id, error, retry_at, now)
            if final:
                log.error("job %s failed after %d attempts: %s", job.id, job.attempts + 1, error)
