"""Curated memories as rows: creating them, finding them, their repeats, and curation's counters.

A memory is a row of `memories` with a full-text row (fts.py) and, once embedded, a vector
(vectors.py). This module makes and reads the rows: create, find live ones by normalized
text, record a repeat (occurrence), count the copies of a text for recall, list and look
up; and the curation counters and deferred nominations written in the same transactions.
Changes of a memory's body after it was made (merges, retire, undo) are in revisions.py.
"""

from __future__ import annotations

import math
import secrets
import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

from ..records import EXACT_REPEAT, FOLDED_BY_LLM, KeyCopies, MemoryRow
from ..shown import Shown, with_ctes
from . import fts
from .vectors import _blob, vector_table

_MEMORY_COLUMNS = (
    "rowid, id, owner, namespace, body, occurrences, created_at, updated_at, occurred_at, lane_id, norm_key,"
    " expires_at, superseded_by"
)
_ROW_FIELDS = 13


# The memories queued remember jobs supersede, each with the job (store/shown.py says why): built
# once per statement from the partial index of queued superseding jobs (migration 013) and joined
# by memory id. A correlated probe per row instead cost 7 ms a list of 50 with 200 such jobs
# queued; with none queued the plain statements run (the empty join cost 0.5 ms a recall).
_PENDING_CTE = (
    "RECURSIVE pending_split (job_owner, job_id, rest, memory_id) AS ("
    " SELECT owner, id, supersedes || ',', NULL FROM remember_jobs WHERE status = 'queued' AND supersedes IS NOT NULL"
    " UNION ALL SELECT job_owner, job_id, substr(rest, instr(rest, ',') + 1), substr(rest, 1, instr(rest, ',') - 1)"
    " FROM pending_split WHERE rest != ''),"
    " pending_supersede (job_owner, memory_id, job_id) AS MATERIALIZED (SELECT job_owner, memory_id, MIN(job_id)"
    " FROM pending_split WHERE memory_id IS NOT NULL GROUP BY job_owner, memory_id)"
)
_PENDING_JOIN = " LEFT JOIN pending_supersede ps ON ps.job_owner = memories.owner AND ps.memory_id = memories.id"
# What recall and list read of a memory (FROM memories with _PENDING_JOIN): `superseded_by` is the
# memory that replaced it or, for a live one, the queued job about to.
_SHOWN_COLUMNS = ", ".join(
    "COALESCE(memories.superseded_by, ps.job_id) AS superseded_by" if c == "superseded_by" else f"memories.{c}"
    for c in _MEMORY_COLUMNS.split(", ")
)


_PLAIN = Shown("", _MEMORY_COLUMNS, "", "status = 'live'")
_PENDING = Shown(f"{_PENDING_CTE}, ", _SHOWN_COLUMNS, _PENDING_JOIN, "(status = 'live' AND ps.job_id IS NULL)")


def reading_of(conn: sqlite3.Connection) -> Shown:
    has = conn.execute("SELECT 1 FROM remember_jobs WHERE status = 'queued' AND supersedes IS NOT NULL LIMIT 1")
    return _PENDING if has.fetchone() else _PLAIN


def new_memory_id() -> str:
    return "m_" + secrets.token_hex(8)


# --- write side (called inside the worker's transaction) -------------------


def live_by_norm_key(conn: sqlite3.Connection, lane: int, key: str) -> list[tuple[int, str, str]]:
    """(rowid, id, body) of live memories in the lane with this normalized-text key."""
    return conn.execute(
        "SELECT rowid, id, body FROM memories WHERE lane_id = ? AND norm_key = ? AND status = 'live'",
        (lane, key),
    ).fetchall()


def live_norm_keys(conn: sqlite3.Connection, lane: int, keys: Iterable[str]) -> set[str]:
    keys = list(set(keys))
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            row[0]
            for row in conn.execute(
                f"SELECT norm_key FROM memories WHERE lane_id = ? AND status = 'live' AND norm_key IN ({marks})",
                (lane, *chunk),
            )
        )
    return found


def create_memory(
    conn: sqlite3.Connection,
    *,
    owner: str,
    namespace: str,
    lane: int,
    body: str,
    key: str,
    source_job_id: str,
    vector: np.ndarray | None,
    model_id: str | None,
    now: float,
    occurred_at: float | None = None,
    created_at: float | None = None,
) -> tuple[int, str]:
    """A new live memory with its FTS row (and vector row). `created_at` is when it was remembered."""
    memory_id = new_memory_id()
    rowid = conn.execute(
        "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, source_job_id, vector_model,"
        " occurred_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory_id,
            owner,
            namespace,
            lane,
            body,
            key,
            source_job_id,
            model_id if vector is not None else None,
            occurred_at,
            created_at if created_at is not None else now,
            now,
        ),
    ).lastrowid
    assert rowid is not None  # an INSERT always sets it
    fts.add(conn, lane, rowid, body)
    table = vector_table(conn) if vector is not None else None
    if table is not None and vector is not None:
        conn.execute(f"INSERT INTO {table} (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, _blob(vector)))
    return rowid, memory_id


def add_occurrence(conn: sqlite3.Connection, rowid: int, now: float) -> None:
    conn.execute("UPDATE memories SET occurrences = occurrences + 1, updated_at = ? WHERE rowid = ?", (now, rowid))


def bump_counters(conn: sqlite3.Connection, markers: Iterable[str]) -> None:
    conn.executemany(
        "INSERT INTO curation_counters (marker, count) VALUES (?, 1)"
        " ON CONFLICT (marker) DO UPDATE SET count = count + 1",
        [(m,) for m in markers],
    )


def defer_nominations(conn: sqlite3.Connection, rowid: int, lane: int, job_id: str) -> None:
    """Count this new memory's nominees later (the no-LLM path: they cannot change its outcome)."""
    conn.execute(
        "INSERT OR REPLACE INTO deferred_nominations (memory_rowid, lane_id, job_id) VALUES (?, ?, ?)",
        (rowid, lane, job_id),
    )


def deferred_nominations(conn: sqlite3.Connection, limit: int) -> tuple[int, list[tuple[int, str]]] | None:
    """The oldest lane with memories whose nominees are still to be counted: (lane, [(rowid,
    job id)]), oldest first, at most `limit`; None when there are none."""
    first = conn.execute("SELECT lane_id FROM deferred_nominations ORDER BY memory_rowid LIMIT 1").fetchone()
    if first is None:
        return None
    rows = conn.execute(
        "SELECT memory_rowid, job_id FROM deferred_nominations WHERE lane_id = ? ORDER BY memory_rowid LIMIT ?",
        (first[0], limit),
    ).fetchall()
    return first[0], [(rowid, job_id) for rowid, job_id in rows]


def take_deferred_nominations(conn: sqlite3.Connection, rowids: Sequence[int]) -> set[int]:
    """Remove these from the deferred list; the ones that were still on it (another process
    may have counted the rest already)."""
    taken: set[int] = set()
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        taken.update(
            rowid
            for (rowid,) in conn.execute(
                f"DELETE FROM deferred_nominations WHERE memory_rowid IN ({marks}) RETURNING memory_rowid", part
            )
        )
    return taken


def deferred_nomination_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM deferred_nominations").fetchone()[0]


def counters(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT marker, count FROM curation_counters ORDER BY marker").fetchall())


# --- read side -------------------------------------------------------------


def unembedded_in_lane(conn: sqlite3.Connection, lane: int, limit: int) -> list[MemoryRow]:
    """Live memories of one lane that have no vector yet, so recall can score them itself."""
    shown = reading_of(conn)
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join}"
        " WHERE lane_id = ? AND status = 'live' AND vector_model IS NULL ORDER BY memories.rowid DESC LIMIT ?",
        (lane, limit),
    ).fetchall()
    return [MemoryRow(*row) for row in rows]


def lane_totals(conn: sqlite3.Connection, lanes: Sequence[int]) -> dict[int, tuple[int, int]]:
    """lane -> (live memories, characters of their bodies), from the counts triggers keep (011)."""
    wanted = sorted(set(lanes))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(f"SELECT id, live_count, live_chars FROM lanes WHERE id IN ({marks})", wanted)
    return {lane: (count, chars) for lane, count, chars in rows}


# The memories a read with include_superseded sees: the live ones and those another fact replaced.
_SUPERSEDED = "(status = 'retired' AND superseded_by IS NOT NULL)"
_SHOWN_WITH_SUPERSEDED = f"(status = 'live' OR {_SUPERSEDED})"


def _in_window(column: str) -> str:
    """SQL: `column` lies in [:since, :until], either end open when NULL."""
    return f"((:since IS NULL OR {column} >= :since) AND (:until IS NULL OR {column} <= :until))"


def copies_by_key(
    conn: sqlite3.Connection,
    lanes: Sequence[int],
    keys: Iterable[str],
    since: float | None = None,
    until: float | None = None,
    live_at: float | None = None,
    superseded: bool = False,
) -> dict[str, KeyCopies]:
    """For each normalized-text key with a memory in the lanes that a recall could show (live;
    with `live_at`, not expired by then; with `superseded`, superseded ones too): those memories
    and the repeats recorded on them, each counted when its own instant (occurred_at, else
    created_at) falls in [since, until]. Over everything stored, not only what a search fetched.
    A count about a text, never evidence about one memory: which memory falls in a window is
    `repeats_in_window`'s to say.

    A repeat recorded without a job (counts imported from elsewhere) takes its memory's instant."""
    keys = list(dict.fromkeys(keys))
    if not keys or not lanes:
        return {}
    params: dict[str, object] = {
        "since": since,
        "until": until,
        "exact": EXACT_REPEAT,
        "llm": FOLDED_BY_LLM,
        "live_at": live_at,
    }
    reading = reading_of(conn)
    shown = _SHOWN_WITH_SUPERSEDED if superseded else reading.current
    params.update({f"l{i}": lane for i, lane in enumerate(lanes)})
    lane_marks = ",".join(f":l{i}" for i in range(len(lanes)))
    found: dict[str, KeyCopies] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join(f":k{i}" for i in range(len(chunk)))
        rows = conn.execute(
            f"WITH {reading.ctes}m AS (SELECT memories.rowid AS pk, id, norm_key, occurrences,"
            f" COALESCE(occurred_at, created_at) AS at FROM memories{reading.join}"
            f"  WHERE lane_id IN ({lane_marks}) AND {shown} AND norm_key IN ({marks})"
            "   AND (:live_at IS NULL OR expires_at IS NULL OR expires_at > :live_at)),"
            " j AS (SELECT m.id AS mid, r.decision AS decision, COALESCE(r.occurred_at, r.created_at) AS at"
            "  FROM m JOIN remember_jobs r ON r.memory_id = m.id WHERE r.decision IN (:exact, :llm)),"
            " t AS (SELECT mid, COUNT(*) AS tracked,"
            f"  SUM(decision = :exact AND {_in_window('at')}) AS exact,"
            f"  SUM(decision = :llm AND {_in_window('at')}) AS llm FROM j GROUP BY mid)"
            " SELECT m.norm_key, m.occurrences, COALESCE(t.tracked, 0), COALESCE(t.exact, 0),"
            f"  COALESCE(t.llm, 0), {_in_window('m.at')}, m.id FROM m LEFT JOIN t ON t.mid = m.id ORDER BY m.pk",
            {**params, **{f"k{i}": key for i, key in enumerate(chunk)}},
        ).fetchall()
        for key, occurrences, tracked, exact, llm, row_in_window, memory_id in rows:
            untracked = max(0, occurrences - tracked) if row_in_window else 0
            before = found.get(key, KeyCopies(0, 0, 0))
            found[key] = KeyCopies(
                before.rows + int(bool(row_in_window)),
                before.occurrences + exact + untracked,
                before.folded_by_llm + llm,
                (*before.ids, memory_id) if row_in_window else before.ids,
            )
    return found


def repeats_in_window(
    conn: sqlite3.Connection, rowids: Sequence[int], since: float | None, until: float | None
) -> dict[int, float]:
    """rowid -> the latest instant (occurred_at, else created_at) of a repeat recorded on that
    live memory (an exact repeat, or a proposal folded in by SKIP) inside [since, until]; the
    memories with none are missing. Only repeats recorded on the memory itself count, never
    another memory with the same text: that one is in the window, or not, by its own dates.
    A repeat recorded without a job (counts imported from elsewhere) takes the memory's own
    instant, so it never moves the memory into a window."""
    found: dict[int, float] = {}
    params: dict[str, object] = {"since": since, "until": until, "exact": EXACT_REPEAT, "llm": FOLDED_BY_LLM}
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        marks = ",".join(f":r{i}" for i in range(len(chunk)))
        found.update(
            conn.execute(
                "SELECT m.rowid, MAX(COALESCE(j.occurred_at, j.created_at)) FROM memories m"
                " JOIN remember_jobs j ON j.memory_id = m.id AND j.owner = m.owner AND j.lane_id = m.lane_id"
                f" WHERE m.rowid IN ({marks}) AND m.status = 'live' AND j.decision IN (:exact, :llm)"
                f" AND {_in_window('COALESCE(j.occurred_at, j.created_at)')} GROUP BY m.rowid",
                {**params, **{f"r{i}": rowid for i, rowid in enumerate(chunk)}},
            ).fetchall()
        )
    return found


def memories_by_rowid(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, MemoryRow]:
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    shown = reading_of(conn)
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join}"
        f" WHERE status = 'live' AND memories.rowid IN ({marks})",
        tuple(rowids),
    ).fetchall()
    return {row[0]: MemoryRow(*row) for row in rows}


def adjacent(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[MemoryRow | None, MemoryRow | None]]:
    """rowid -> (the live memory of its lane created just before it, just after it); each a
    seek on memories_lane_created, whose entries end in the rowid. A row-value bound
    ((created_at, rowid) < (?, ?)) is only a range on created_at there, so every memory sharing
    the timestamp (one bulk remember's) would be stepped over: the same timestamp is sought by
    rowid first, then the nearest other timestamp."""
    if not rowids:
        return {}
    wanted = sorted(set(rowids))
    marks = ",".join("?" * len(wanted))
    pairs = conn.execute(
        f"""SELECT m.rowid,
                coalesce(
                  (SELECT p.rowid FROM memories p WHERE p.lane_id = m.lane_id AND p.status = 'live'
                    AND p.created_at = m.created_at AND p.rowid < m.rowid ORDER BY p.rowid DESC LIMIT 1),
                  (SELECT p.rowid FROM memories p WHERE p.lane_id = m.lane_id AND p.status = 'live'
                    AND p.created_at < m.created_at ORDER BY p.created_at DESC, p.rowid DESC LIMIT 1)),
                coalesce(
                  (SELECT n.rowid FROM memories n WHERE n.lane_id = m.lane_id AND n.status = 'live'
                    AND n.created_at = m.created_at AND n.rowid > m.rowid ORDER BY n.rowid LIMIT 1),
                  (SELECT n.rowid FROM memories n WHERE n.lane_id = m.lane_id AND n.status = 'live'
                    AND n.created_at > m.created_at ORDER BY n.created_at, n.rowid LIMIT 1))
            FROM memories m WHERE m.status = 'live' AND m.rowid IN ({marks})""",
        wanted,
    ).fetchall()
    rows = memories_by_rowid(
        conn, sorted({pk for _, before, after in pairs for pk in (before, after) if pk is not None})
    )
    return {
        pk: (rows.get(before) if before is not None else None, rows.get(after) if after is not None else None)
        for pk, before, after in pairs
    }


def memory_by_id(conn: sqlite3.Connection, owner: str, memory_id: str) -> tuple[MemoryRow, str, str | None] | None:
    """(row, status, retired_into) of the owner's memory with this id, whatever its status; a
    retired memory that was replaced rather than merged is 'superseded'."""
    row = conn.execute(
        f"SELECT {_MEMORY_COLUMNS}, status, retired_into FROM memories WHERE owner = ? AND id = ?",
        (owner, memory_id),
    ).fetchone()
    if row is None:
        return None
    memory = MemoryRow(*row[:_ROW_FIELDS])
    status = row[_ROW_FIELDS]
    if status == "retired" and memory.superseded_by is not None:
        status = "superseded"
    return memory, status, row[_ROW_FIELDS + 1]


def list_memories(
    conn: sqlite3.Connection,
    owner: str,
    namespace: str | None,
    before: tuple[float, str] | None,
    since: float | None,
    limit: int,
    live_at: float | None = None,
    superseded: bool = False,
    until: float | None = None,
    expired_by: float | None = None,
    superseded_only: bool = False,
) -> list[MemoryRow]:
    """The owner's live memories, newest first, after the (created_at, id) position `before`;
    with `live_at`, not those expired by then; with `superseded`, the superseded ones too (and
    those a queued job is superseding, which are hidden otherwise); with `since` / `until`, those
    that, or a repeat recorded on them, happened inside [since, until]; with `expired_by`, only
    those expired by then; with `superseded_only`, only the superseded ones (and those being)."""
    shown = reading_of(conn)
    if superseded_only:
        being = " OR (status = 'live' AND ps.job_id IS NOT NULL)" if shown.join else ""
        which = f"({_SUPERSEDED}{being})"
    else:
        which = _SHOWN_WITH_SUPERSEDED if superseded else shown.current
    clauses: list[str] = ["owner = ?", which]
    params: list[object] = [owner]
    if live_at is not None:
        clauses.append("(expires_at IS NULL OR expires_at > ?)")
        params.append(live_at)
    if expired_by is not None:
        clauses.append("expires_at <= ?")
        params.append(expired_by)
    if namespace is not None:
        clauses.append("namespace = ?")
        params.append(namespace)
    if before is not None:
        clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params += [before[0], before[0], before[1]]
    if since is not None or until is not None:  # it, or a repeat recorded on it, happened in the window
        low = -math.inf if since is None else since
        high = math.inf if until is None else until
        clauses.append(
            "(COALESCE(occurred_at, created_at) BETWEEN ? AND ? OR EXISTS (SELECT 1 FROM remember_jobs j"
            " WHERE j.memory_id = memories.id AND j.decision IN (?, ?)"
            " AND COALESCE(j.occurred_at, j.created_at) BETWEEN ? AND ?))"
        )
        params += [low, high, EXACT_REPEAT, FOLDED_BY_LLM, low, high]
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join} WHERE {' AND '.join(clauses)}"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [MemoryRow(*row) for row in rows]


def expired_memories(conn: sqlite3.Connection, owner: str, now: float, limit: int) -> list[str]:
    """Ids of the owner's memories expired by `now`, soonest expired first: live ones, and
    superseded ones too (purge erases what this names; a superseded memory keeps its text)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM memories WHERE owner = ? AND expires_at IS NOT NULL"
            " AND (status = 'live' OR (status = 'retired' AND superseded_by IS NOT NULL))"
            " AND expires_at <= ? ORDER BY expires_at, id LIMIT ?",
            (owner, now, limit),
        )
    ]


def superseded_in(conn: sqlite3.Connection, lanes: Sequence[int], limit: int) -> list[MemoryRow]:
    """The superseded memories of each lane, most recently superseded first, at most `limit` per lane."""
    found: list[MemoryRow] = []
    for lane in lanes:
        rows = conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE lane_id = ? AND status = 'retired'"
            " AND superseded_by IS NOT NULL ORDER BY updated_at DESC, rowid DESC LIMIT ?",
            (lane, limit),
        ).fetchall()
        found.extend(MemoryRow(*row) for row in rows)
    return found
