"""Curated memories: bodies, their vector and full-text rows, occurrences, counters."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Iterable, Sequence

import numpy as np

from ...errors import EmbeddingError
from ...records import Revision
from ..contract import VectorMatch, VectorSearch
from ..records import EXACT_REPEAT, FOLDED_BY_LLM, KeyCopies, MemoryRow
from . import fts, matrix, matrix_sync
from .database import transaction

# The first vector table's name; `vector_table(conn)` gives the one in use.
VECTOR_TABLE = "memory_vectors"


_MEMORY_COLUMNS = (
    "rowid, id, owner, namespace, body, occurrences, created_at, updated_at, occurred_at, lane_id, norm_key"
)


def new_memory_id() -> str:
    return "m_" + secrets.token_hex(8)


# --- embedding model bookkeeping -------------------------------------------


def vector_model(conn: sqlite3.Connection) -> tuple[str, int] | None:
    row = conn.execute("SELECT model_id, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], row[1]) if row else None


def vector_table(conn: sqlite3.Connection) -> str | None:
    """The vec0 table searches use (it changes when `memwal-mcp reindex` completes); None before any vector."""
    row = conn.execute("SELECT vector_table FROM embedding_meta WHERE singleton = 1").fetchone()
    return row[0] if row else None


def create_vector_table(conn: sqlite3.Connection, name: str, dim: int) -> None:
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING vec0("
        f" lane_id integer partition key, embedding float[{int(dim)}] distance_metric=cosine)"
    )


def ensure_vector_table(conn: sqlite3.Connection, model_id: str, dim: int) -> str | None:
    """Bind the database to a model's dimension on first use; refuse a different one.

    Returns the stored model id when it differs from `model_id` at the same dimension
    (vectors still comparable in shape, but not in meaning: the caller warns).
    """
    stored = vector_model(conn)
    if stored is None:
        with transaction(conn):
            if vector_model(conn) is None:
                conn.execute(
                    "INSERT INTO embedding_meta (singleton, model_id, dim, created_at) VALUES (1, ?, ?, ?)",
                    (model_id, dim, time.time()),
                )
                create_vector_table(conn, VECTOR_TABLE, dim)
        stored = vector_model(conn)
    assert stored is not None
    stored_model, stored_dim = stored
    if stored_dim != dim:
        raise EmbeddingError(
            f"this database's vectors were built with {stored_model!r} ({stored_dim} dimensions); "
            f"the configured model {model_id!r} has {dim}. Run `memwal-mcp reindex` to re-embed the memories "
            "with it, or configure the original model (MEMWAL_EMBEDDING__MODEL)."
        )
    return stored_model if stored_model != model_id else None


def _blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


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


def unembedded(conn: sqlite3.Connection, limit: int) -> list[tuple[int, int, str]]:
    """(rowid, lane_id, body) of live memories without a vector (made while the model was unavailable)."""
    return conn.execute(
        "SELECT rowid, lane_id, body FROM memories WHERE status = 'live' AND vector_model IS NULL LIMIT ?", (limit,)
    ).fetchall()


def unembedded_in_lane(conn: sqlite3.Connection, lane: int, limit: int) -> list[MemoryRow]:
    """Live memories of one lane that have no vector yet, so recall can score them itself."""
    rows = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE lane_id = ? AND status = 'live' AND vector_model IS NULL"
        " ORDER BY rowid DESC LIMIT ?",
        (lane, limit),
    ).fetchall()
    return [MemoryRow(*row) for row in rows]


# vector_model of a memory the model could not embed: left out of the backlog
# (full-text search still finds it; reindex tries again).
UNEMBEDDABLE = "-"


def mark_unembeddable(conn: sqlite3.Connection, rowids: Sequence[int]) -> None:
    conn.executemany(
        "UPDATE memories SET vector_model = ? WHERE rowid = ? AND vector_model IS NULL",
        [(UNEMBEDDABLE, rowid) for rowid in rowids],
    )


def set_vectors(conn: sqlite3.Connection, items: Sequence[tuple[int, int, str, np.ndarray]], model_id: str) -> int:
    """Store vectors computed off the writer for (rowid, lane, body): only where the memory is still
    live, still unembedded and still has that body -- a forget, merge or undo may have landed
    meanwhile. Returns how many were stored."""
    stored = 0
    with transaction(conn):
        table = vector_table(conn)
        if table is None:
            raise EmbeddingError("no vector table yet: the model's dimension is not recorded")
        for rowid, lane, body, vector in items:
            claimed = conn.execute(
                "UPDATE memories SET vector_model = ? WHERE rowid = ? AND status = 'live'"
                " AND vector_model IS NULL AND body = ?",
                (model_id, rowid, body),
            ).rowcount
            if claimed:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
                conn.execute(
                    f"INSERT INTO {table} (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, _blob(vector))
                )
                stored += 1
    return stored


# --- read side -------------------------------------------------------------


def _vector_space(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """(vector table in use, dimension), or None before the first vector."""
    row = conn.execute("SELECT vector_table, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    return (row[0], row[1]) if row else None


class _LaneSearch:
    """A lane's matrix as it was when synced: searching it needs no connection, so recall and
    curation run it while the connection's thread does something else."""

    __slots__ = ("_matrix",)

    def __init__(self, lane_matrix: matrix.LaneMatrix) -> None:
        self._matrix = lane_matrix

    def __call__(self, queries: np.ndarray, k: int, min_score: float | None = None) -> list[list[VectorMatch]]:
        if min_score is None and len(queries) == 1:
            return [matrix.nearest_in(self._matrix, queries[0], k)]
        return matrix.nearest_many_in(self._matrix, queries, k, min_score)


def _no_vectors(queries: np.ndarray, k: int, min_score: float | None = None) -> list[list[VectorMatch]]:
    return [[] for _ in range(len(queries))]


def vector_search(conn: sqlite3.Connection, lane: int) -> VectorSearch:
    """Exact kNN over the lane's live vectors as of now (see contract.VectorSearch)."""
    space = _vector_space(conn)
    return _no_vectors if space is None else _LaneSearch(matrix_sync.synced(conn, *space, lane))


def lane_vectors_of(conn: sqlite3.Connection, lane: int, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The vectors of these memories of the lane (those that have one), from the lane's matrix."""
    space = _vector_space(conn)
    return (
        {} if space is None or not rowids else matrix.vectors_in(matrix_sync.synced(conn, *space, lane), list(rowids))
    )


def cosines(conn: sqlite3.Connection, lane: int, query: np.ndarray, rowids: Sequence[int]) -> dict[int, float]:
    """Cosine of the query with these memories of the lane (those that have a vector)."""
    space = _vector_space(conn)
    return {} if space is None or not rowids else matrix_sync.cosines(conn, *space, lane, query, list(rowids))


def average_length(conn: sqlite3.Connection, owner: str) -> float:
    """Mean body length (characters) of the owner's live memories; 0 when there are none."""
    count, chars = text_totals(conn, owner)
    return chars / count if count > 0 else 0.0


def text_totals(conn: sqlite3.Connection, owner: str) -> tuple[int, int]:
    """(live memories, characters of their bodies) of the owner."""
    row = conn.execute("SELECT live_count, live_chars FROM owner_text_stats WHERE owner = ?", (owner,)).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def _in_window(column: str) -> str:
    """SQL: `column` lies in [:since, :until], either end open when NULL."""
    return f"((:since IS NULL OR {column} >= :since) AND (:until IS NULL OR {column} <= :until))"


def copies_by_key(
    conn: sqlite3.Connection,
    lanes: Sequence[int],
    keys: Iterable[str],
    since: float | None = None,
    until: float | None = None,
) -> dict[str, KeyCopies]:
    """For each normalized-text key with a live memory in the lanes: its memories and the
    repeats recorded on them, each counted when its own instant (occurred_at, else created_at)
    falls in [since, until]. Over everything stored, not only what a search fetched.

    A repeat recorded without a job (counts imported from elsewhere) takes its memory's instant."""
    keys = list(dict.fromkeys(keys))
    if not keys or not lanes:
        return {}
    params: dict[str, object] = {"since": since, "until": until, "exact": EXACT_REPEAT, "llm": FOLDED_BY_LLM}
    params.update({f"l{i}": lane for i, lane in enumerate(lanes)})
    lane_marks = ",".join(f":l{i}" for i in range(len(lanes)))
    found: dict[str, KeyCopies] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join(f":k{i}" for i in range(len(chunk)))
        rows = conn.execute(
            "WITH m AS (SELECT id, norm_key, occurrences, COALESCE(occurred_at, created_at) AS at FROM memories"
            f"  WHERE lane_id IN ({lane_marks}) AND status = 'live' AND norm_key IN ({marks})),"
            " j AS (SELECT m.id AS mid, r.decision AS decision, COALESCE(r.occurred_at, r.created_at) AS at"
            "  FROM m JOIN remember_jobs r ON r.memory_id = m.id WHERE r.decision IN (:exact, :llm)),"
            " t AS (SELECT mid, COUNT(*) AS tracked,"
            f"  SUM(decision = :exact AND {_in_window('at')}) AS exact,"
            f"  SUM(decision = :llm AND {_in_window('at')}) AS llm,"
            f"  MAX(CASE WHEN {_in_window('at')} THEN at END) AS latest FROM j GROUP BY mid)"
            " SELECT m.norm_key, m.at, m.occurrences, COALESCE(t.tracked, 0), COALESCE(t.exact, 0),"
            f"  COALESCE(t.llm, 0), t.latest, {_in_window('m.at')} FROM m LEFT JOIN t ON t.mid = m.id",
            {**params, **{f"k{i}": key for i, key in enumerate(chunk)}},
        ).fetchall()
        for key, at, occurrences, tracked, exact, llm, latest, row_in_window in rows:
            untracked = max(0, occurrences - tracked) if row_in_window else 0
            before = found.get(key, KeyCopies(0, 0, 0, None))
            times = [t for t in (before.latest, latest, at if row_in_window else None) if t is not None]
            found[key] = KeyCopies(
                before.rows + int(bool(row_in_window)),
                before.occurrences + exact + untracked,
                before.folded_by_llm + llm,
                max(times) if times else None,
            )
    return found


def memories_by_rowid(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, MemoryRow]:
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    rows = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE status = 'live' AND rowid IN ({marks})", tuple(rowids)
    ).fetchall()
    return {row[0]: MemoryRow(*row) for row in rows}


# --- merges (LLM tier) -----------------------------------------------------


def replace_body(
    conn: sqlite3.Connection,
    *,
    rowid: int,
    lane: int,
    body: str,
    key: str,
    vector: np.ndarray | None,
    model_id: str | None,
    decision: str,
    job_id: str | None,
    llm_model: str | None,
    guard: str | None,
    merged_ids: Sequence[str] = (),
    now: float,
) -> None:
    """Give a memory a new body, keeping the old one as a revision; re-index it."""
    (old_body,) = conn.execute("SELECT body FROM memories WHERE rowid = ?", (rowid,)).fetchone()
    conn.execute(
        "INSERT INTO memory_revisions (memory_rowid, body, decision, job_id, llm_model, guard, merged_ids, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, old_body, decision, job_id, llm_model, guard, ",".join(merged_ids) or None, now),
    )
    conn.execute(
        "UPDATE memories SET body = ?, norm_key = ?, vector_model = ?, updated_at = ? WHERE rowid = ?",
        (body, key, model_id if vector is not None else None, now, rowid),
    )
    fts.replace(conn, lane, rowid, body)
    table = vector_table(conn)
    if table is not None:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        if vector is not None:
            conn.execute(
                f"INSERT INTO {table} (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, _blob(vector))
            )


def retire(conn: sqlite3.Connection, rowid: int, into_id: str, now: float) -> None:
    """Fold a memory into another (CONSOLIDATE): its body and history stay, it leaves the indexes."""
    (lane,) = conn.execute("SELECT lane_id FROM memories WHERE rowid = ?", (rowid,)).fetchone()
    conn.execute(
        "UPDATE memories SET status = 'retired', retired_into = ?, updated_at = ? WHERE rowid = ? AND status = 'live'",
        (into_id, now, rowid),
    )
    fts.remove(conn, lane, [rowid])
    table = vector_table(conn)
    if table is not None:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


def memory_by_id(conn: sqlite3.Connection, owner: str, memory_id: str) -> tuple[MemoryRow, str, str | None] | None:
    """(row, status, retired_into) of the owner's memory with this id, whatever its status."""
    row = conn.execute(
        f"SELECT {_MEMORY_COLUMNS}, status, retired_into FROM memories WHERE owner = ? AND id = ?",
        (owner, memory_id),
    ).fetchone()
    if row is None:
        return None
    return MemoryRow(*row[:11]), row[11], row[12]


def revisions(conn: sqlite3.Connection, rowid: int) -> list[Revision]:
    """Previous bodies, newest first."""
    rows = conn.execute(
        "SELECT body, decision, job_id, llm_model, guard, merged_ids, created_at FROM memory_revisions"
        " WHERE memory_rowid = ? ORDER BY id DESC",
        (rowid,),
    ).fetchall()
    return [
        Revision(body, decision, job_id, llm_model, guard, tuple(merged.split(",")) if merged else (), created_at)
        for body, decision, job_id, llm_model, guard, merged, created_at in rows
    ]


def retired_into(conn: sqlite3.Connection, owner: str, memory_id: str) -> list[str]:
    """Ids of the owner's memories a CONSOLIDATE folded into this one (directly)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM memories WHERE owner = ? AND retired_into = ? ORDER BY rowid", (owner, memory_id)
        )
    ]


def unretire(conn: sqlite3.Connection, owner: str, memory_id: str, from_id: str) -> bool:
    """Bring back a memory a CONSOLIDATE retired into `from_id`; it is re-indexed, its vector comes later."""
    row = conn.execute(
        "SELECT rowid, body, lane_id FROM memories WHERE owner = ? AND id = ? AND status = 'retired' AND retired_into = ?",
        (owner, memory_id, from_id),
    ).fetchone()
    if row is None:
        return False
    rowid, body, lane = row
    conn.execute(
        "UPDATE memories SET status = 'live', retired_into = NULL, vector_model = NULL, updated_at = ? WHERE rowid = ?",
        (time.time(), rowid),
    )
    fts.add(conn, lane, rowid, body)
    return True


def list_memories(
    conn: sqlite3.Connection,
    owner: str,
    namespace: str | None,
    before: tuple[float, str] | None,
    since: float | None,
    limit: int,
) -> list[MemoryRow]:
    """The owner's live memories, newest first, after the (created_at, id) position `before`."""
    clauses: list[str] = ["owner = ?", "status = 'live'"]
    params: list[object] = [owner]
    if namespace is not None:
        clauses.append("namespace = ?")
        params.append(namespace)
    if before is not None:
        clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params += [before[0], before[0], before[1]]
    if since is not None:  # it, or a repeat recorded on it, happened then or later
        clauses.append(
            "(COALESCE(occurred_at, created_at) >= ? OR EXISTS (SELECT 1 FROM remember_jobs j"
            " WHERE j.memory_id = memories.id AND j.decision IN (?, ?) AND COALESCE(j.occurred_at, j.created_at) >= ?))"
        )
        params += [since, EXACT_REPEAT, FOLDED_BY_LLM, since]
    rows = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(clauses)}"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [MemoryRow(*row) for row in rows]
