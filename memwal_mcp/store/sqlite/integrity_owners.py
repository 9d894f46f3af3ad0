"""Integrity of the walls between owners and lanes, and of the totals kept per owner and lane.

Owners are walls: every job and memory is filed in a lane of its own owner and namespace,
and a job ends in a memory of its own lane. The per-owner text totals and per-lane live
counts that triggers keep (searches read them instead of counting) must match the memories
they count.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ...wording import counted
from ..records import Problem
from .integrity_common import _capped


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


def _lane_live_counts(conn: sqlite3.Connection) -> Iterator[Problem]:
    """The per-lane totals that triggers keep (migrations 009, 011) match the live memories:
    recall's length factor reads them."""
    rows = conn.execute(
        "WITH actual AS (SELECT l.id AS lane, COUNT(m.rowid) AS n, COALESCE(SUM(LENGTH(m.body)), 0) AS chars"
        "                FROM lanes l LEFT JOIN memories m ON m.lane_id = l.id AND m.status = 'live' GROUP BY l.id)"
        " SELECT l.id, l.live_count, l.live_chars, a.n, a.chars FROM lanes l JOIN actual a ON a.lane = l.id"
        " WHERE l.live_count != a.n OR l.live_chars != a.chars ORDER BY l.id"
    ).fetchall()
    yield from _capped(
        rows,
        lambda lane, count, chars, actual, actual_chars: Problem(
            "warning",
            "lane_live_count_drift",
            f"says {counted(count, 'live memory')} / {counted(chars, 'character')}, the memories table has"
            f" {actual} / {actual_chars}",
            "lanes",
            str(lane),
        ),
    )
