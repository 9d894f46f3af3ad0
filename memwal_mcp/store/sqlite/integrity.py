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
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from ..records import Problem, StoreCounts
from . import fts
from .vectors import UNEMBEDDABLE, VECTOR_TABLE

# Decisions a done job may carry (curation/apply.py, curation/plan.py, lifecycle.forget_memory).
DECISIONS = ("created", "occurrence", "skipped", "updated", "consolidated", "appended", "forgotten")
MERGE_DECISIONS = ("updated", "consolidated", "appended")
# A queued job older than this means no worker is curating its lane.
STALE_QUEUE_S = 3600.0
# Rows reported per code; the rest are summed up in one more line.
MAX_PER_CODE = 50


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return row is not None


def _cap(problems: Iterable[Problem]) -> Iterator[Problem]:
    """At most MAX_PER_CODE lines per code, then one line saying how many more."""
    by_code: dict[str, list[Problem]] = {}
    for problem in problems:
        by_code.setdefault(problem.code, []).append(problem)
    for code, found in by_code.items():
        yield from found[:MAX_PER_CODE]
        if len(found) > MAX_PER_CODE:
            first = found[0]
            yield Problem(first.severity, code, f"... and {len(found) - MAX_PER_CODE} more like the above", first.table)


def _capped(rows: Sequence[Sequence], make: Callable[..., Problem]) -> Iterator[Problem]:
    return _cap(make(*row) for row in rows)


# --- the journal ------------------------------------------------------------


def _done_jobs_without_memory(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT j.id, j.decision, j.memory_id FROM remember_jobs j"
        " LEFT JOIN memories m ON m.id = j.memory_id"
        " WHERE j.status = 'done' AND m.id IS NULL ORDER BY j.seq"
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
            "error", "memory_created_twice", f"{count} jobs say they created it: {jobs}", "memories", memory
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
        "SELECT j.id, j.memory_id, m.status, j.text != '' FROM remember_jobs j"
        " LEFT JOIN memories m ON m.id = j.memory_id"
        " WHERE j.decision = 'forgotten' AND (m.status IS NOT 'forgotten' OR j.text != '') ORDER BY j.seq"
    ).fetchall()

    def make(job, memory, status, has_text) -> Problem:
        if has_text:
            return Problem(
                "error", "forgotten_job_keeps_text", "forgotten, but its text is still stored", "remember_jobs", job
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
            f"{count} jobs of {owner}/{namespace} queued for over an hour (oldest {(now - oldest) / 3600:.1f} h):"
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
            f"{count} jobs of {owner}/{namespace} failed curation (their text is kept); last error: {error}",
            "lanes",
            str(lane),
        ),
    )


# --- memories -----------------------------------------------------------------


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


def _retirements(conn: sqlite3.Connection) -> Iterator[Problem]:
    rows = conn.execute(
        "SELECT m.id, m.status, m.owner, m.lane_id, m.retired_into, t.id, t.owner, t.lane_id, t.status"
        " FROM memories m LEFT JOIN memories t ON t.id = m.retired_into"
        " WHERE m.retired_into IS NOT NULL OR m.status = 'retired' ORDER BY m.rowid"
    ).fetchall()
    found: list[Problem] = []
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


# --- indexes: full text and vectors ------------------------------------------------


def _full_text_rows(conn: sqlite3.Connection) -> Iterator[Problem]:
    """Each owner's FTS5 table holds exactly their live memories, with current bodies and lanes."""
    if not _table_exists(conn, "owner_fts"):  # before migration 008
        return
    tables = fts.tables(conn)
    problems = [
        Problem(
            "error",
            "fts_table_missing",
            "owner has no full-text table (lexical recall cannot search it)",
            "lanes",
            owner,
        )
        for (owner,) in conn.execute("SELECT DISTINCT owner FROM lanes ORDER BY owner")
        if owner not in tables
    ]
    for owner, name in tables.items():
        if not _table_exists(conn, name):
            problems.append(
                Problem("error", "fts_table_missing", f"full-text table {name} is gone", "owner_fts", owner)
            )
            continue
        problems += [
            Problem(
                "error",
                "fts_row_missing",
                "live memory has no full-text row (lexical recall cannot find it)",
                "memories",
                memory,
            )
            for (memory,) in conn.execute(
                f"SELECT m.id FROM memories m LEFT JOIN {name} f ON f.rowid = m.rowid"
                " WHERE m.owner = ? AND m.status = 'live' AND f.rowid IS NULL ORDER BY m.rowid",
                (owner,),
            )
        ]
        for rowid, memory, m_owner, status, lane_ok, body_ok in conn.execute(
            f"SELECT f.rowid, m.id, m.owner, m.status, f.lane = 'l' || m.lane_id, f.body IS m.body FROM {name} f"
            " LEFT JOIN memories m ON m.rowid = f.rowid"
            " WHERE m.rowid IS NULL OR m.owner != ? OR m.status != 'live' OR f.lane IS NOT 'l' || m.lane_id"
            " OR f.body IS NOT m.body ORDER BY f.rowid",
            (owner,),
        ):
            if memory is None:
                problems.append(
                    Problem("error", "fts_row_orphan", f"indexes rowid {rowid}, which has no memory", name, str(rowid))
                )
            elif m_owner != owner:
                problems.append(
                    Problem(
                        "error",
                        "fts_row_other_owner",
                        f"{owner!r}'s full-text table indexes memory {memory} of another owner",
                        "memories",
                        memory,
                    )
                )
            elif status != "live":
                problems.append(
                    Problem("error", "fts_row_orphan", f"indexes memory {memory}, which is {status}", name, str(rowid))
                )
            elif not lane_ok:
                problems.append(
                    Problem(
                        "error",
                        "fts_row_other_lane",
                        "full-text row names another lane than the memory's",
                        "memories",
                        memory,
                    )
                )
            elif not body_ok:
                problems.append(
                    Problem(
                        "error",
                        "fts_body_stale",
                        "full-text row indexes another body than the memory's",
                        "memories",
                        memory,
                    )
                )
    yield from _cap(problems)


def _vector_meta(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """(model id, table name) of the vectors searches use; None before the first vector."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(embedding_meta)")}
    table = "vector_table" if "vector_table" in columns else f"'{VECTOR_TABLE}'"  # before migration 006
    row = conn.execute(f"SELECT model_id, {table} FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], row[1]) if row else None


def _vector_tables(conn: sqlite3.Connection) -> Iterator[Problem]:
    meta = _vector_meta(conn)
    vec_tables = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING vec0%'"
        )
    }
    if meta is not None and meta[1] not in vec_tables:
        yield Problem(
            "error",
            "vector_table_missing",
            f"embedding_meta names {meta[1]} for {meta[0]!r}; it is gone",
            "embedding_meta",
        )
    building = None
    if _table_exists(conn, "reindex_state"):
        row = conn.execute(
            "SELECT model_id, vector_table, last_rowid FROM reindex_state WHERE singleton = 1"
        ).fetchone()
        if row is not None:
            building = row[1]
            yield Problem(
                "info",
                "reindex_unfinished",
                f"a reindex to {row[0]!r} has reached rowid {row[2]} (run `memwal-mcp reindex` to finish it)",
                "reindex_state",
                row[1],
            )
    for name in sorted(vec_tables - {meta[1] if meta else None, building}):
        yield Problem(
            "warning", "vector_table_leftover", "a vector table nothing uses (space that could be freed)", name
        )


def _vector_rows(conn: sqlite3.Connection) -> Iterator[Problem]:
    meta = _vector_meta(conn)
    table = meta[1] if meta is not None and _table_exists(conn, meta[1]) else None
    vectors: dict[int, int] = dict(conn.execute(f"SELECT rowid, lane_id FROM {table}").fetchall()) if table else {}
    memories = conn.execute("SELECT rowid, id, lane_id, status, vector_model FROM memories ORDER BY rowid").fetchall()
    by_rowid = {row[0]: row for row in memories}
    missing, crossed, unclaimed, other_model, unembedded, unembeddable = [], [], [], [], 0, 0
    for rowid, memory, lane, status, model in memories:
        if status != "live":
            continue
        if model is None or model == UNEMBEDDABLE:
            unembedded += model is None
            unembeddable += model == UNEMBEDDABLE
            if rowid in vectors:
                unclaimed.append((memory,))
        elif rowid not in vectors:
            missing.append((memory, model))
        else:
            if vectors[rowid] != lane:
                crossed.append((memory, vectors[rowid], lane))
            if meta is not None and model != meta[0]:
                other_model.append((memory, model, meta[0]))
    orphans = [
        (rowid, by_rowid[rowid][1] if rowid in by_rowid else None, by_rowid[rowid][3] if rowid in by_rowid else None)
        for rowid in sorted(vectors)
        if rowid not in by_rowid or by_rowid[rowid][3] != "live"
    ]
    yield from _capped(
        missing,
        lambda memory, model: Problem(
            "error",
            "vector_row_missing",
            f"embedded with {model!r} but has no vector row (vector recall cannot find it)",
            "memories",
            memory,
        ),
    )
    yield from _capped(
        orphans,
        lambda rowid, memory, status: Problem(
            "error",
            "vector_row_orphan",
            f"belongs to memory {memory}, which is {status}" if memory else f"rowid {rowid} has no memory",
            table,
            str(rowid),
        ),
    )
    yield from _capped(
        crossed,
        lambda memory, vector_lane, lane: Problem(
            "error",
            "vector_lane_mismatch",
            f"vector row is in lane {vector_lane}, the memory in lane {lane}",
            "memories",
            memory,
        ),
    )
    yield from _capped(
        unclaimed,
        lambda memory: Problem(
            "warning",
            "vector_row_unclaimed",
            "has a vector row but is marked not embedded (the backlog replaces it)",
            "memories",
            memory,
        ),
    )
    yield from _capped(
        other_model,
        lambda memory, model, stored: Problem(
            "warning",
            "vector_model_differs",
            f"embedded with {model!r}, the store's vectors with {stored!r}",
            "memories",
            memory,
        ),
    )
    if unembedded:
        yield Problem(
            "info",
            "memories_unembedded",
            f"{unembedded} live memories wait for a vector (the curation worker embeds them)",
            "memories",
        )
    if unembeddable:
        yield Problem(
            "info",
            "memories_unembeddable",
            f"{unembeddable} live memories the model could not embed (full-text search finds them;"
            " `memwal-mcp reindex` tries again)",
            "memories",
        )


# --- revisions ----------------------------------------------------------------------


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
    for revision, merged, m_owner, m_lane in conn.execute(
        "SELECT r.id, r.merged_ids, m.owner, m.lane_id FROM memory_revisions r"
        " JOIN memories m ON m.rowid = r.memory_rowid WHERE r.merged_ids IS NOT NULL AND r.merged_ids != ''"
        " ORDER BY r.id"
    ).fetchall():
        for merged_id in merged.split(","):
            found = conn.execute("SELECT owner, lane_id FROM memories WHERE id = ?", (merged_id,)).fetchone()
            if found is not None and (found[0] != m_owner or found[1] != m_lane):
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


# --- SQLite itself ------------------------------------------------------------------


def _sqlite_integrity(conn: sqlite3.Connection) -> Iterator[Problem]:
    # Since SQLite 3.44 this also verifies FTS5 indexes (their xIntegrity method).
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
    _owner_text_stats,
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


def find_problems(conn: sqlite3.Connection, now: float | None = None) -> list[Problem]:
    """Every rule, checked in one snapshot; errors first, then warnings, then info."""
    now = time.time() if now is None else now
    problems: list[Problem] = []
    with _snapshot(conn):
        for check in CHECKS:
            problems.extend(check(conn))
        problems.extend(_stale_or_failed_queues(conn, now))
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


def check_store(conn: sqlite3.Connection) -> tuple[list[Problem], StoreCounts]:
    """Problems and counts from one snapshot: what `memwal-mcp check` reports."""
    with _snapshot(conn):
        return find_problems(conn), store_counts(conn)


def created_at(conn: sqlite3.Connection) -> float | None:
    """When the first migration ran: when this database file was set up."""
    if not _table_exists(conn, "schema_migrations"):
        return None
    return conn.execute("SELECT MIN(applied_at) FROM schema_migrations").fetchone()[0]
