"""Integrity of the walls between owners and lanes, and of the totals kept per owner and lane.

Owners are walls: every job and memory is filed in a lane of its own owner and namespace,
and a job ends in a memory of its own lane. The per-owner text totals and per-lane live
counts that triggers keep (searches read them instead of counting) must match the memories
they count.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ..records import Problem
from .integrity_common import _capped, _table_exists


def _jobs_outside_their_lane(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.lane_id, j.owner, j.namespace, l.id, l.owner, l.namespace FROM remember_jobs j"
        " LEFT JOIN lanes l ON l.id = j.lane_id"
        " WHERE l.id IS NULL OR l.owner != j.owner OR l.namespace != j.namespace ORDER BY j.seq"
    ).fetchall()

    def make(job, lane, owner, namespace, found, l_owner, l_namespace) -> Problem:
        if found is None:
            return Problem("error", "job_lane_missing", f"lane {lane} does not exist", "remember_jobs", job)
        return Problem(
            "error",
            "job_lane_crossed",
            f"job of {owner}/{namespace} filed in lane {lane} of {l_owner}/{l_namespace}",
            "remember_jobs",
            job,
        )

    yield from _capped(rows, make)


def _memories_outside_their_lane(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT m.id, m.lane_id, m.owner, m.namespace, l.id, l.owner, l.namespace FROM memories m"
        " LEFT JOIN lanes l ON l.id = m.lane_id"
        " WHERE l.id IS NULL OR l.owner != m.owner OR l.namespace != m.namespace ORDER BY m.rowid"
    ).fetchall()

    def make(memory, lane, owner, namespace, found, l_owner, l_namespace) -> Problem:
        if found is None:
            return Problem("error", "memory_lane_missing", f"lane {lane} does not exist", "memories", memory)
        return Problem(
            "error",
            "memory_lane_crossed",
            f"memory of {owner}/{namespace} filed in lane {lane} of {l_owner}/{l_namespace}",
            "memories",
            memory,
        )

    yield from _capped(rows, make)


def _jobs_in_another_lanes_memory(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.owner, j.namespace, j.lane_id, m.id, m.owner, m.namespace, m.lane_id"
        " FROM remember_jobs j JOIN memories m ON m.id = j.memory_id"
        " WHERE j.owner != m.owner OR j.namespace != m.namespace OR j.lane_id != m.lane_id ORDER BY j.seq"
    ).fetchall()

    def make(job, owner, namespace, lane, memory, m_owner, m_namespace, m_lane) -> Problem:
        if owner != m_owner:
            return Problem(
                "error",
                "job_memory_other_owner",
                f"job of owner {owner!r} ended in memory {memory} of owner {m_owner!r}",
                "remember_jobs",
                job,
            )
        if namespace != m_namespace:
            return Problem(
                "error",
                "job_memory_other_namespace",
                f"job in namespace {namespace!r} ended in memory {memory} of namespace {m_namespace!r}",
                "remember_jobs",
                job,
            )
        return Problem(
            "error",
            "job_memory_other_lane",
            f"job in lane {lane} ended in memory {memory} of lane {m_lane}",
            "remember_jobs",
            job,
        )

    yield from _capped(rows, make)


def _owner_text_stats(conn: sqlite3.Connection) -> Iterator[Problem]:
    """The per-owner totals that triggers keep (migration 004) match the live memories."""
    if not _table_exists(conn, "owner_text_stats"):
        return
    rows = conn.execute(
        "WITH actual AS (SELECT owner, COUNT(*) AS n, SUM(LENGTH(body)) AS chars FROM memories"
        "                WHERE status = 'live' GROUP BY owner)"
        " SELECT a.owner, COALESCE(s.live_count, 0), COALESCE(s.live_chars, 0), a.n, a.chars"
        " FROM actual a LEFT JOIN owner_text_stats s ON s.owner = a.owner"
        " WHERE s.owner IS NULL OR s.live_count != a.n OR s.live_chars != a.chars"
        " UNION ALL"
        " SELECT s.owner, s.live_count, s.live_chars, 0, 0 FROM owner_text_stats s"
        " WHERE (s.live_count != 0 OR s.live_chars != 0) AND s.owner NOT IN (SELECT owner FROM actual)"
    ).fetchall()
    yield from _capped(
        rows,
        lambda owner, count, chars, actual_count, actual_chars: Problem(
            "warning",
            "owner_text_stats_drift",
            f"says {count} live memories / {chars} characters, the memories table has {actual_count} / {actual_chars}",
            "owner_text_stats",
            owner,
        ),
    )


def _lane_live_counts(conn: sqlite3.Connection) -> Iterator[Problem]:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(lanes)")}
    if "live_count" not in columns:  # before migration 009
        return
    rows = conn.execute(
        "SELECT l.id, l.live_count, (SELECT COUNT(*) FROM memories m WHERE m.lane_id = l.id AND m.status = 'live')"
        " AS actual FROM lanes l WHERE l.live_count != actual ORDER BY l.id"
    ).fetchall()
    yield from _capped(
        rows,
        lambda lane, count, actual: Problem(
            "warning",
            "lane_live_count_drift",
            f"says {count} live memories, the memories table has {actual}",
            "lanes",
            str(lane),
        ),
    )
