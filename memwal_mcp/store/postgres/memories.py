"""Curated memories as rows on PostgreSQL: creating them, finding them, their repeats, and
curation's counters and deferred nominations (written in the same transactions).

A memory row carries its own word index (`tsv`, `doc_len`: words.py) and, once embedded, a
vector row (vectors.py). Body changes after a memory was made are in revisions.py.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterable, Sequence

import numpy as np
from psycopg import Connection

from ..records import EXACT_REPEAT, FOLDED_BY_LLM, KeyCopies, MemoryRow
from ..shown import Shown, with_ctes
from . import vectors, words

MEMORY_COLUMNS = (
    "pk, id, owner, namespace, body, occurrences, created_at, updated_at, occurred_at, lane_id, norm_key,"
    " expires_at, superseded_by"
)
_ROW_FIELDS = 13


# The memories queued remember jobs supersede, each with the job (store/shown.py says why): built
# once per statement from the partial index of queued superseding jobs (migration 004) and joined
# by memory id; with none queued, the plain statements run.
_PENDING_CTE = (
    "pending_supersede (job_owner, memory_id, job_id) AS (SELECT j.owner, u.memory_id, min(j.id)"
    " FROM remember_jobs j CROSS JOIN LATERAL unnest(string_to_array(j.supersedes, ',')) AS u (memory_id)"
    " WHERE j.status = 'queued' AND j.supersedes IS NOT NULL GROUP BY j.owner, u.memory_id)"
)
_PENDING_JOIN = " LEFT JOIN pending_supersede ps ON ps.job_owner = memories.owner AND ps.memory_id = memories.id"
_SHOWN_COLUMNS = ", ".join(
    "COALESCE(memories.superseded_by, ps.job_id) AS superseded_by" if c == "superseded_by" else f"memories.{c}"
    for c in MEMORY_COLUMNS.split(", ")
)


_PLAIN = Shown("", MEMORY_COLUMNS, "", "status = 'live'")
_PENDING = Shown(f"{_PENDING_CTE}, ", _SHOWN_COLUMNS, _PENDING_JOIN, "(status = 'live' AND ps.job_id IS NULL)")


def reading_of(conn: Connection) -> Shown:
    has = conn.execute("SELECT 1 FROM remember_jobs WHERE status = 'queued' AND supersedes IS NOT NULL LIMIT 1")
    return _PENDING if has.fetchone() else _PLAIN


def new_memory_id() -> str:
    return "m_" + secrets.token_hex(8)


def row(values: Sequence) -> MemoryRow:
    return MemoryRow(*values)


# --- write side (called inside the worker's transaction) -------------------


def live_by_norm_key(conn: Connection, lane: int, key: str) -> list[tuple[int, str, str]]:
    rows = conn.execute(
        "SELECT pk, id, body FROM memories WHERE lane_id = %s AND norm_key = %s AND status = 'live' ORDER BY pk",
        (lane, key),
    ).fetchall()
    return [(int(pk), memory_id, body) for pk, memory_id, body in rows]


def live_norm_keys(conn: Connection, lane: int, keys: Iterable[str]) -> set[str]:
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT DISTINCT norm_key FROM memories WHERE lane_id = %s AND status = 'live' AND norm_key = ANY(%s)",
        (lane, wanted),
    ).fetchall()
    return {key for (key,) in rows}


def create_memory(
    conn: Connection,
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
    """A new live memory with its words indexed (and its vector row)."""
    memory_id = new_memory_id()
    tsv, length = words.document(body)
    table = vectors.vector_table(conn) if vector is not None else None
    inserted = conn.execute(
        "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, source_job_id, vector_model,"
        " occurred_at, created_at, updated_at, tsv, doc_len, words_version)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, {words.VERSION}) RETURNING pk",
        (
            memory_id,
            owner,
            namespace,
            lane,
            body,
            key,
            source_job_id,
            model_id if table is not None else None,
            occurred_at,
            created_at if created_at is not None else now,
            now,
            tsv,
            length,
        ),
    ).fetchone()
    assert inserted is not None  # RETURNING of an INSERT
    pk = int(inserted[0])
    if table is not None and vector is not None:
        vectors.put(conn, pk, lane, vector)
    return pk, memory_id


def add_occurrence(conn: Connection, pk: int, now: float) -> None:
    conn.execute("UPDATE memories SET occurrences = occurrences + 1, updated_at = %s WHERE pk = %s", (now, pk))


def bump_counters(conn: Connection, markers: Iterable[str]) -> None:
    counts: dict[str, int] = {}
    for marker in markers:
        counts[marker] = counts.get(marker, 0) + 1
    for marker in sorted(counts):
        conn.execute(
            "INSERT INTO curation_counters (marker, count) VALUES (%s, %s)"
            " ON CONFLICT (marker) DO UPDATE SET count = curation_counters.count + EXCLUDED.count",
            (marker, counts[marker]),
        )


def defer_nominations(conn: Connection, pk: int, lane: int, job_id: str) -> None:
    conn.execute(
        "INSERT INTO deferred_nominations (memory_pk, lane_id, job_id) VALUES (%s, %s, %s)"
        " ON CONFLICT (memory_pk) DO UPDATE SET lane_id = EXCLUDED.lane_id, job_id = EXCLUDED.job_id",
        (pk, lane, job_id),
    )


def deferred_nominations(conn: Connection, limit: int) -> tuple[int, list[tuple[int, str]]] | None:
    first = conn.execute("SELECT lane_id FROM deferred_nominations ORDER BY memory_pk LIMIT 1").fetchone()
    if first is None:
        return None
    rows = conn.execute(
        "SELECT memory_pk, job_id FROM deferred_nominations WHERE lane_id = %s ORDER BY memory_pk LIMIT %s",
        (first[0], limit),
    ).fetchall()
    return int(first[0]), [(int(pk), job_id) for pk, job_id in rows]


def take_deferred_nominations(conn: Connection, pks: Sequence[int]) -> set[int]:
    if not pks:
        return set()
    rows = conn.execute(
        "DELETE FROM deferred_nominations WHERE memory_pk = ANY(%s) RETURNING memory_pk", (list(pks),)
    ).fetchall()
    return {int(pk) for (pk,) in rows}


def deferred_nomination_count(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) FROM deferred_nominations").fetchone()
    return int(row[0]) if row else 0


def counters(conn: Connection) -> dict[str, int]:
    return {m: int(c) for m, c in conn.execute("SELECT marker, count FROM curation_counters ORDER BY marker")}


# --- read side -------------------------------------------------------------


def unembedded_in_lane(conn: Connection, lane: int, limit: int) -> list[MemoryRow]:
    shown = reading_of(conn)
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join}"
        " WHERE lane_id = %s AND status = 'live' AND vector_model IS NULL ORDER BY memories.pk DESC LIMIT %s",
        (lane, limit),
    ).fetchall()
    return [row(r) for r in rows]


def lane_totals(conn: Connection, lanes: Sequence[int]) -> dict[int, tuple[int, int]]:
    wanted = sorted(set(lanes))
    if not wanted:
        return {}
    rows = conn.execute("SELECT id, live_count, live_chars FROM lanes WHERE id = ANY(%s)", (wanted,)).fetchall()
    return {int(lane): (int(count), int(chars)) for lane, count, chars in rows}


# The memories a read with include_superseded sees: the live ones and those another fact replaced.
_SUPERSEDED = "(status = 'retired' AND superseded_by IS NOT NULL)"
_SHOWN_WITH_SUPERSEDED = f"(status = 'live' OR {_SUPERSEDED})"


def _in_window(column: str) -> str:
    """SQL: `column` lies in [since, until], either end open when NULL."""
    return (
        f"((%(since)s::float8 IS NULL OR {column} >= %(since)s::float8)"
        f" AND (%(until)s::float8 IS NULL OR {column} <= %(until)s::float8))"
    )


def copies_by_key(
    conn: Connection,
    lanes: Sequence[int],
    keys: Iterable[str],
    since: float | None = None,
    until: float | None = None,
    live_at: float | None = None,
    superseded: bool = False,
) -> dict[str, KeyCopies]:
    """See the SQLite backend's memories.copies_by_key: the same count, one query."""
    wanted = list(dict.fromkeys(keys))
    if not wanted or not lanes:
        return {}
    params = {
        "since": since,
        "until": until,
        "exact": EXACT_REPEAT,
        "llm": FOLDED_BY_LLM,
        "lanes": list(lanes),
        "keys": wanted,
        "live_at": live_at,
    }
    reading = reading_of(conn)
    shown = _SHOWN_WITH_SUPERSEDED if superseded else reading.current
    rows = conn.execute(
        f"WITH {reading.ctes}m AS (SELECT memories.pk, id, norm_key, occurrences,"
        f" COALESCE(occurred_at, created_at) AS at FROM memories{reading.join}"
        f"  WHERE lane_id = ANY(%(lanes)s) AND {shown} AND norm_key = ANY(%(keys)s)"
        "   AND (%(live_at)s::float8 IS NULL OR expires_at IS NULL OR expires_at > %(live_at)s::float8)),"
        " j AS (SELECT m.id AS mid, r.decision AS decision, COALESCE(r.occurred_at, r.created_at) AS at"
        "  FROM m JOIN remember_jobs r ON r.memory_id = m.id WHERE r.decision IN (%(exact)s, %(llm)s)),"
        " t AS (SELECT mid, count(*) AS tracked,"
        f"  count(*) FILTER (WHERE decision = %(exact)s AND {_in_window('at')}) AS exact,"
        f"  count(*) FILTER (WHERE decision = %(llm)s AND {_in_window('at')}) AS llm FROM j GROUP BY mid)"
        " SELECT m.norm_key, m.occurrences, COALESCE(t.tracked, 0), COALESCE(t.exact, 0),"
        f"  COALESCE(t.llm, 0), {_in_window('m.at')}, m.id FROM m LEFT JOIN t ON t.mid = m.id ORDER BY m.pk",
        params,
    ).fetchall()
    found: dict[str, KeyCopies] = {}
    for key, occurrences, tracked, exact, llm, row_in_window, memory_id in rows:
        untracked = max(0, int(occurrences) - int(tracked)) if row_in_window else 0
        before = found.get(key, KeyCopies(0, 0, 0))
        found[key] = KeyCopies(
            before.rows + int(bool(row_in_window)),
            before.occurrences + int(exact) + untracked,
            before.folded_by_llm + int(llm),
            (*before.ids, memory_id) if row_in_window else before.ids,
        )
    return found


def repeats_in_window(
    conn: Connection, pks: Sequence[int], since: float | None, until: float | None
) -> dict[int, float]:
    """See the SQLite backend's memories.repeats_in_window."""
    if not pks:
        return {}
    params = {"since": since, "until": until, "exact": EXACT_REPEAT, "llm": FOLDED_BY_LLM, "pks": list(pks)}
    rows = conn.execute(
        "SELECT m.pk, max(COALESCE(j.occurred_at, j.created_at)) FROM memories m"
        " JOIN remember_jobs j ON j.memory_id = m.id AND j.owner = m.owner AND j.lane_id = m.lane_id"
        " WHERE m.pk = ANY(%(pks)s) AND m.status = 'live' AND j.decision IN (%(exact)s, %(llm)s)"
        f" AND {_in_window('COALESCE(j.occurred_at, j.created_at)')} GROUP BY m.pk",
        params,
    ).fetchall()
    return {int(pk): float(at) for pk, at in rows}


def memories_by_pk(conn: Connection, pks: Sequence[int]) -> dict[int, MemoryRow]:
    if not pks:
        return {}
    shown = reading_of(conn)
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join} WHERE status = 'live' AND memories.pk = ANY(%s)",
        (list(pks),),
    ).fetchall()
    return {int(r[0]): row(r) for r in rows}


def adjacent(conn: Connection, pks: Sequence[int]) -> dict[int, tuple[MemoryRow | None, MemoryRow | None]]:
    """pk -> (the live memory of its lane created just before it, just after it); each a seek
    on memories_lane_created."""
    if not pks:
        return {}
    pairs = conn.execute(
        """SELECT m.pk,
                (SELECT p.pk FROM memories p
                  WHERE p.lane_id = m.lane_id AND p.status = 'live' AND (p.created_at, p.pk) < (m.created_at, m.pk)
                  ORDER BY p.created_at DESC, p.pk DESC LIMIT 1),
                (SELECT n.pk FROM memories n
                  WHERE n.lane_id = m.lane_id AND n.status = 'live' AND (n.created_at, n.pk) > (m.created_at, m.pk)
                  ORDER BY n.created_at, n.pk LIMIT 1)
            FROM memories m WHERE m.status = 'live' AND m.pk = ANY(%s)""",
        (sorted(set(pks)),),
    ).fetchall()
    rows = memories_by_pk(conn, sorted({pk for _, before, after in pairs for pk in (before, after) if pk is not None}))
    return {
        int(pk): (rows.get(before) if before is not None else None, rows.get(after) if after is not None else None)
        for pk, before, after in pairs
    }


def memory_by_id(conn: Connection, owner: str, memory_id: str) -> tuple[MemoryRow, str, str | None] | None:
    """(row, status, retired_into) whatever its status; a retired memory that was replaced
    rather than merged is 'superseded'."""
    found = conn.execute(
        f"SELECT {MEMORY_COLUMNS}, status, retired_into FROM memories WHERE owner = %s AND id = %s",
        (owner, memory_id),
    ).fetchone()
    if found is None:
        return None
    memory = row(found[:_ROW_FIELDS])
    status = found[_ROW_FIELDS]
    if status == "retired" and memory.superseded_by is not None:
        status = "superseded"
    return memory, status, found[_ROW_FIELDS + 1]


def list_memories(
    conn: Connection,
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
    clauses: list[str] = ["owner = %s", which]
    params: list[object] = [owner]
    if live_at is not None:
        clauses.append("(expires_at IS NULL OR expires_at > %s)")
        params.append(live_at)
    if expired_by is not None:
        clauses.append("expires_at <= %s")
        params.append(expired_by)
    if namespace is not None:
        clauses.append("namespace = %s")
        params.append(namespace)
    if before is not None:
        clauses.append("(created_at, id) < (%s, %s)")
        params += [before[0], before[1]]
    if since is not None or until is not None:  # it, or a repeat recorded on it, happened in the window
        low = -math.inf if since is None else since
        high = math.inf if until is None else until
        clauses.append(
            "(COALESCE(occurred_at, created_at) BETWEEN %s AND %s OR EXISTS (SELECT 1 FROM remember_jobs j"
            " WHERE j.memory_id = memories.id AND j.decision IN (%s, %s)"
            " AND COALESCE(j.occurred_at, j.created_at) BETWEEN %s AND %s))"
        )
        params += [low, high, EXACT_REPEAT, FOLDED_BY_LLM, low, high]
    rows = conn.execute(
        f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join} WHERE {' AND '.join(clauses)}"
        " ORDER BY created_at DESC, id DESC LIMIT %s",
        (*params, limit),
    ).fetchall()
    return [row(r) for r in rows]


def expired_memories(conn: Connection, owner: str, now: float, limit: int) -> list[str]:
    """Ids of the owner's memories expired by `now`, soonest expired first: live ones, and
    superseded ones too (purge erases what this names; a superseded memory keeps its text)."""
    rows = conn.execute(
        "SELECT id FROM memories WHERE owner = %s AND expires_at IS NOT NULL"
        " AND (status = 'live' OR (status = 'retired' AND superseded_by IS NOT NULL))"
        " AND expires_at <= %s ORDER BY expires_at, id LIMIT %s",
        (owner, now, limit),
    ).fetchall()
    return [r[0] for r in rows]


def superseded_in(conn: Connection, lanes: Sequence[int], limit: int) -> list[MemoryRow]:
    """The superseded memories of each lane, most recently superseded first, at most `limit` per lane."""
    found: list[MemoryRow] = []
    for lane in lanes:
        rows = conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE lane_id = %s AND status = 'retired'"
            " AND superseded_by IS NOT NULL ORDER BY updated_at DESC, pk DESC LIMIT %s",
            (lane, limit),
        ).fetchall()
        found.extend(row(r) for r in rows)
    return found
