"""Integrity of the journal: every done job agrees with the memory it names.

The journal (remember_jobs) is the source of truth, so these rules read from the job's
side: a done job names a memory that exists, with a decision curation can make (a job
forgotten before it was curated names none); a 'created' job is its memory's source and a
repeat is not; a merge kept the body it replaced; a forgotten job keeps no text. Queues that wait too long, and jobs that failed,
are reported as warnings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ...records import ANALYZED
from ...wording import agree, counted
from ..records import Problem
from .integrity_common import _capped

# Decisions a done job may carry (curation/apply.py, curation/plan.py, store/lifecycle.forget).
DECISIONS = ("created", "occurrence", "skipped", "updated", "consolidated", "appended", "forgotten", ANALYZED)
MERGE_DECISIONS = ("updated", "consolidated", "appended")
# A queued job older than this means no worker is curating its lane.
STALE_QUEUE_S = 3600.0


# A job forgotten before it was curated (by its id, or as a queued repeat or copy of what a
# forget erased) is done, decided 'forgotten', and names no memory: it never became one.
_FORGOTTEN_UNCURATED = "(j.status = 'done' AND j.decision = 'forgotten' AND j.memory_id IS NULL)"
# An analyze request holds its source text and is never curated: done, and in no memory.
_ANALYZE_REQUEST = f"(j.status = 'done' AND j.decision = '{ANALYZED}' AND j.memory_id IS NULL)"


def _done_jobs_without_memory(conn: sqlite3.Connection) -> Iterator[Problem]:
    # A forgotten-uncurated job that still holds text is damage too, named by _forgotten_jobs_not_erased.
    rows = conn.execute(
        "SELECT j.id, j.decision, j.memory_id FROM remember_jobs j"
        " LEFT JOIN memories m ON m.id = j.memory_id"
        f" WHERE j.status = 'done' AND m.id IS NULL AND NOT {_FORGOTTEN_UNCURATED} AND NOT {_ANALYZE_REQUEST}"
        " ORDER BY j.seq"
    ).fetchall()

    def make(job: str, decision: str | None, memory: str | None) -> Problem:
        if memory is None:
            return Problem(
                "error", "job_without_memory", f"done ({decision}) but names no memory", "remember_jobs", job
            )
        return Problem(
            "error",
            "job_memory_missing",
            f"done ({decision}) in memory {memory}, which does not exist",
            "remember_jobs",
            job,
        )

    yield from _capped(rows, make)


def _jobs_with_unknown_decision(conn: sqlite3.Connection) -> Iterator[Problem]:
    marks = ",".join("?" * len(DECISIONS))
    rows = conn.execute(
        "SELECT id, decision FROM remember_jobs"
        f" WHERE status = 'done' AND (decision IS NULL OR decision NOT IN ({marks})) ORDER BY seq",
        DECISIONS,
    ).fetchall()
    yield from _capped(
        rows,
        lambda job, decision: Problem(
            "error", "job_decision_unknown", f"done with decision {decision!r}", "remember_jobs", job
        ),
    )


def _created_jobs_not_the_source(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, m.id, m.source_job_id FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        " WHERE j.status = 'done' AND j.decision = 'created' AND m.source_job_id != j.id ORDER BY j.seq"
    ).fetchall()
    yield from _capped(
        rows,
        lambda job, memory, source: Problem(
            "error",
            "created_job_not_source",
            f"says it created memory {memory}, whose source job is {source}",
            "remember_jobs",
            job,
        ),
    )


def _memories_created_twice(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT memory_id, COUNT(*), GROUP_CONCAT(id, ', ') FROM remember_jobs"
        " WHERE status = 'done' AND decision = 'created' AND memory_id IS NOT NULL"
        " GROUP BY memory_id HAVING COUNT(*) > 1 ORDER BY MIN(seq)"
    ).fetchall()
    yield from _capped(
        rows,
        lambda memory, count, jobs: Problem(
            "error",
            "memory_created_twice",
            f"{counted(count, 'job')} {agree(count, 'says it', 'say they')} created it: {jobs}",
            "memories",
            memory,
        ),
    )


def _repeats_that_are_the_source(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.decision, m.id FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        " WHERE j.status = 'done' AND j.decision IN ('occurrence', 'skipped') AND m.source_job_id = j.id"
        " ORDER BY j.seq"
    ).fetchall()
    yield from _capped(
        rows,
        lambda job, decision, memory: Problem(
            "error",
            "occurrence_job_is_source",
            f"recorded as {decision} of memory {memory}, but is its source job",
            "remember_jobs",
            job,
        ),
    )


def _merges_without_revision(conn: sqlite3.Connection) -> Iterator[Problem]:
    marks = ",".join("?" * len(MERGE_DECISIONS))
    rows = conn.execute(
        "SELECT j.id, j.decision, m.id FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        f" WHERE j.status = 'done' AND j.decision IN ({marks}) AND NOT EXISTS ("
        "   SELECT 1 FROM memory_revisions r WHERE r.memory_rowid = m.rowid AND r.job_id = j.id"
        "   AND r.decision = j.decision)"
        " ORDER BY j.seq",
        MERGE_DECISIONS,
    ).fetchall()
    yield from _capped(
        rows,
        lambda job, decision, memory: Problem(
            "error",
            "merge_job_without_revision",
            f"{decision} memory {memory}, but no revision keeps the body it replaced",
            "remember_jobs",
            job,
        ),
    )


def _forgotten_jobs_not_erased(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.status, j.memory_id, m.status, j.text != '' FROM remember_jobs j"
        " LEFT JOIN memories m ON m.id = j.memory_id"
        " WHERE j.decision = 'forgotten'"
        f" AND ((m.status IS NOT 'forgotten' AND NOT {_FORGOTTEN_UNCURATED}) OR j.text != '') ORDER BY j.seq"
    ).fetchall()

    def make(job, job_status, memory, status, has_text) -> Problem:
        if has_text:
            return Problem(
                "error", "forgotten_job_keeps_text", "forgotten, but its text is still stored", "remember_jobs", job
            )
        if memory is None:
            # Queued (or failed) yet forgotten: a worker would curate its erased text into an empty memory.
            return Problem(
                "error",
                "forgotten_job_not_done",
                f"forgotten before it was curated, but still {job_status}",
                "remember_jobs",
                job,
            )
        return Problem(
            "error",
            "forgotten_job_memory_not_forgotten",
            f"forgotten, but its memory {memory} is {status or 'missing'}",
            "remember_jobs",
            job,
        )

    yield from _capped(rows, make)


def _jobs_of_forgotten_memories(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.decision, m.id FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        " WHERE m.status = 'forgotten' AND j.decision IS NOT 'forgotten' ORDER BY j.seq"
    ).fetchall()
    yield from _capped(
        rows,
        lambda job, decision, memory: Problem(
            "error",
            "job_of_forgotten_memory",
            f"still {decision} in memory {memory}, which was forgotten (its text survives)",
            "remember_jobs",
            job,
        ),
    )


def _stale_or_failed_queues(conn: sqlite3.Connection, now: float) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.lane_id, j.owner, j.namespace, COUNT(*), MIN(j.created_at) FROM remember_jobs j"
        " WHERE j.status = 'queued' AND j.created_at < ? GROUP BY j.lane_id, j.owner, j.namespace ORDER BY j.lane_id",
        (now - STALE_QUEUE_S,),
    ).fetchall()
    yield from _capped(
        rows,
        lambda lane, owner, namespace, count, oldest: Problem(
            "warning",
            "jobs_queued_long",
            f"{counted(count, 'job')} of {owner}/{namespace} queued for over an hour (oldest {(now - oldest) / 3600:.1f} h):"
            " is a server with the curation worker running?",
            "lanes",
            str(lane),
        ),
    )
    rows = conn.execute(
        "SELECT lane_id, owner, namespace, COUNT(*), MAX(error) FROM remember_jobs WHERE status = 'failed'"
        " GROUP BY lane_id, owner, namespace ORDER BY lane_id"
    ).fetchall()
    yield from _capped(
        rows,
        lambda lane, owner, namespace, count, error: Problem(
            "warning",
            "jobs_failed",
            f"{counted(count, 'job')} of {owner}/{namespace} failed curation ({agree(count, 'its', 'their')} text is kept);"
            f" last error: {error}",
            "lanes",
            str(lane),
        ),
    )
