"""Integrity of memories from their own side: sources, repeats, retirements, forgets, revisions.

A memory's source job exists and ended in it; its occurrence count matches the repeats in
the journal; a retired memory points at a memory of its own lane that exists and was not
forgotten, with no loop; a forgotten memory keeps no text and has its tombstone; a revision
belongs to a memory that was not forgotten and names jobs and merged memories of its lane.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ...records import SUPERSEDED, UNSUPERSEDED
from ..records import Problem
from .integrity_common import _cap, _capped, _table_exists


def _memories_without_their_source(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT m.id, m.source_job_id, j.id, j.memory_id FROM memories m"
        " LEFT JOIN remember_jobs j ON j.id = m.source_job_id"
        " WHERE j.id IS NULL OR j.memory_id IS NOT m.id ORDER BY m.rowid"
    ).fetchall()

    def make(memory, source, found, elsewhere) -> Problem:
        if found is None:
            return Problem(
                "error", "memory_source_job_missing", f"source job {source} does not exist", "memories", memory
            )
        return Problem(
            "error",
            "memory_source_job_elsewhere",
            f"source job {source} ended in {elsewhere or 'no memory'}",
            "memories",
            memory,
        )

    yield from _capped(rows, make)


def _occurrence_counts(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT m.id, m.occurrences, COUNT(j.id) FROM memories m"
        " LEFT JOIN remember_jobs j ON j.memory_id = m.id AND j.decision IN ('occurrence', 'skipped')"
        " WHERE m.status != 'forgotten' GROUP BY m.rowid HAVING m.occurrences != COUNT(j.id) ORDER BY m.rowid"
    ).fetchall()
    yield from _capped(
        rows,
        lambda memory, counted, jobs: Problem(
            "warning",
            "memory_occurrences_mismatch",
            f"counts {counted} occurrences, the journal has {jobs}",
            "memories",
            memory,
        ),
    )


def _supersessions(conn: sqlite3.Connection) -> list[Problem]:
    """A superseded memory is retired, merged into nothing, and replaced by a memory of its own owner."""
    found: list[Problem] = []
    for memory, status, owner, into, by, b_owner in conn.execute(
        "SELECT m.id, m.status, m.owner, m.retired_into, m.superseded_by, b.owner"
        " FROM memories m LEFT JOIN memories b ON b.id = m.superseded_by"
        " WHERE m.superseded_by IS NOT NULL AND m.status != 'forgotten' ORDER BY m.rowid"
    ).fetchall():
        if status != "retired" or into is not None:
            detail = f"superseded by {by}, yet {status}" + (f" and merged into {into}" if into else "")
            found.append(Problem("error", "superseded_not_retired", detail, "memories", memory))
        elif b_owner is None:
            found.append(
                Problem(
                    "error", "superseded_by_missing", f"superseded by {by}, which does not exist", "memories", memory
                )
            )
        elif b_owner != owner:
            found.append(
                Problem(
                    "error", "superseded_by_crossed", f"superseded by {by} of owner {b_owner!r}", "memories", memory
                )
            )
    return found


def _retirements(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT m.id, m.status, m.owner, m.lane_id, m.retired_into, t.id, t.owner, t.lane_id, t.status"
        " FROM memories m LEFT JOIN memories t ON t.id = m.retired_into"
        " WHERE (m.retired_into IS NOT NULL OR m.status = 'retired') AND m.superseded_by IS NULL ORDER BY m.rowid"
    ).fetchall()
    found: list[Problem] = _supersessions(conn)
    chains: dict[str, str] = {}
    for memory, status, owner, lane, into, target, t_owner, t_lane, t_status in rows:
        if status == "retired" and into is None:
            found.append(Problem("error", "retired_without_target", "retired into nothing", "memories", memory))
        elif status == "live":
            found.append(
                Problem(
                    "error", "live_memory_retired_into", f"live, yet marked retired into {into}", "memories", memory
                )
            )
        elif target is None:
            found.append(
                Problem(
                    "error", "retired_into_missing", f"retired into {into}, which does not exist", "memories", memory
                )
            )
        elif t_owner != owner or t_lane != lane:
            found.append(
                Problem(
                    "error",
                    "retired_into_crossed",
                    f"retired into {into} of owner {t_owner!r} lane {t_lane} (its own: {owner!r} lane {lane})",
                    "memories",
                    memory,
                )
            )
        elif status == "retired" and t_status == "forgotten":
            found.append(
                Problem(
                    "error",
                    "retired_into_forgotten",
                    f"retired into {into}, which was forgotten; forget should have erased this one too",
                    "memories",
                    memory,
                )
            )
        if status == "retired" and into is not None:
            chains[memory] = into
    for start in chains:
        seen, at = {start}, chains[start]
        while at in chains and at not in seen:
            seen.add(at)
            at = chains[at]
        if at == start:
            found.append(
                Problem("error", "retired_into_cycle", "its retired_into chain loops back to it", "memories", start)
            )
    yield from _cap(found)


def _forgotten_leftovers(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT id FROM memories WHERE status = 'forgotten' AND (body != '' OR norm_key != '') ORDER BY rowid"
    ).fetchall()
    yield from _capped(
        rows,
        lambda memory: Problem(
            "error", "forgotten_memory_keeps_text", "forgotten, but its body is still stored", "memories", memory
        ),
    )
    if not _table_exists(conn, "forgotten"):
        return
    rows = conn.execute(
        "SELECT m.id FROM memories m LEFT JOIN forgotten f ON f.memory_id = m.id"
        " WHERE m.status = 'forgotten' AND f.memory_id IS NULL ORDER BY m.rowid"
    ).fetchall()
    yield from _capped(
        rows,
        lambda memory: Problem(
            "warning", "forgotten_tombstone_missing", "forgotten without a tombstone", "memories", memory
        ),
    )
    rows = conn.execute(
        "SELECT f.memory_id, f.owner, f.namespace, m.id, m.status, m.owner, m.namespace FROM forgotten f"
        " LEFT JOIN memories m ON m.id = f.memory_id"
        " WHERE m.id IS NULL OR m.status != 'forgotten' OR m.owner != f.owner OR m.namespace != f.namespace"
        " ORDER BY f.forgotten_at"
    ).fetchall()

    def make(memory, owner, namespace, found, status, m_owner, m_namespace) -> Problem:
        if found is not None and (m_owner != owner or m_namespace != namespace):
            return Problem(
                "error",
                "tombstone_crossed",
                f"tombstone of {owner}/{namespace} for a memory of {m_owner}/{m_namespace}",
                "forgotten",
                memory,
            )
        return Problem(
            "warning", "tombstone_orphan", f"tombstone for a memory that is {status or 'missing'}", "forgotten", memory
        )

    yield from _capped(rows, make)


def _revisions(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT r.id, r.memory_rowid, m.id, m.status FROM memory_revisions r"
        " LEFT JOIN memories m ON m.rowid = r.memory_rowid"
        " WHERE m.rowid IS NULL OR m.status = 'forgotten' ORDER BY r.id"
    ).fetchall()
    yield from _capped(
        rows,
        lambda revision, rowid, memory, status: Problem(
            "error",
            "revision_orphan",
            f"keeps a body of memory {memory}, which was forgotten"
            if memory
            else f"memory rowid {rowid} does not exist",
            "memory_revisions",
            str(revision),
        ),
    )
    rows = conn.execute(
        "SELECT r.id, r.job_id, j.id, j.owner, j.lane_id, m.owner, m.lane_id FROM memory_revisions r"
        " JOIN memories m ON m.rowid = r.memory_rowid LEFT JOIN remember_jobs j ON j.id = r.job_id"
        " WHERE r.job_id IS NOT NULL AND (j.id IS NULL OR j.owner != m.owner OR j.lane_id != m.lane_id) ORDER BY r.id"
    ).fetchall()

    def make(revision, job, found, owner, lane, m_owner, m_lane) -> Problem:
        if found is None:
            return Problem(
                "error",
                "revision_job_missing",
                f"caused by job {job}, which does not exist",
                "memory_revisions",
                str(revision),
            )
        return Problem(
            "error",
            "revision_job_crossed",
            f"caused by job {job} of {owner!r} lane {lane}; the memory is {m_owner!r} lane {m_lane}",
            "memory_revisions",
            str(revision),
        )

    yield from _capped(rows, make)
    # merged_ids names the memories a CONSOLIDATE retired (undo brings them back): one lane's, always.
    crossed = []
    for revision, merged, m_owner, m_lane, decision in conn.execute(
        "SELECT r.id, r.merged_ids, m.owner, m.lane_id, r.decision FROM memory_revisions r"
        " JOIN memories m ON m.rowid = r.memory_rowid WHERE r.merged_ids IS NOT NULL AND r.merged_ids != ''"
        " ORDER BY r.id"
    ).fetchall():
        for merged_id in merged.split(","):
            found = conn.execute("SELECT owner, lane_id FROM memories WHERE id = ?", (merged_id,)).fetchone()
            # A supersede may replace a memory of another namespace of the same owner.
            lane_wall = decision not in (SUPERSEDED, UNSUPERSEDED)
            if found is not None and (found[0] != m_owner or (lane_wall and found[1] != m_lane)):
                crossed.append((revision, merged_id, found[0], found[1], m_owner, m_lane))
    yield from _capped(
        crossed,
        lambda revision, merged_id, owner, lane, m_owner, m_lane: Problem(
            "error",
            "revision_merged_crossed",
            f"merged memory {merged_id} of {owner!r} lane {lane}; the memory is {m_owner!r} lane {m_lane}",
            "memory_revisions",
            str(revision),
        ),
    )
