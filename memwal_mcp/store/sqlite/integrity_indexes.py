"""Integrity of the indexes: full-text rows and vector rows match the live memories.

Each lane's FTS5 table indexes exactly its live memories, with current bodies; each live embedded memory has a vector row in its lane in the table searches use,
and nothing indexes a memory that is gone. Memories still waiting for a vector, or that
the model could not embed, are reported as info.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ...wording import agree, counted
from ..records import Problem
from . import fts
from .integrity_common import _cap, _capped, _table_exists
from .vectors import UNEMBEDDABLE, VECTOR_TABLE


def _full_text_rows(conn: sqlite3.Connection) -> Iterator[Problem]:
    """Each lane's FTS5 table holds exactly its live memories, with current bodies."""
    if not _table_exists(conn, "lane_fts"):  # before migration 011
        return
    tables = fts.tables(conn)
    owner_of = dict(conn.execute("SELECT id, owner FROM lanes").fetchall())
    problems = [
        Problem(
            "error",
            "fts_table_missing",
            "lane has no full-text table (lexical recall cannot search it)",
            "lanes",
            f"{owner}/{namespace}",
        )
        for lane, owner, namespace in conn.execute("SELECT id, owner, namespace FROM lanes ORDER BY id")
        if lane not in tables
    ]
    for lane, name in tables.items():
        if not _table_exists(conn, name):
            problems.append(
                Problem("error", "fts_table_missing", f"full-text table {name} is gone", "lane_fts", str(lane))
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
                " WHERE m.lane_id = ? AND m.status = 'live' AND f.rowid IS NULL ORDER BY m.rowid",
                (lane,),
            )
        ]
        for rowid, memory, m_owner, m_lane, status, body_ok in conn.execute(
            f"SELECT f.rowid, m.id, m.owner, m.lane_id, m.status, f.body IS m.body FROM {name} f"
            " LEFT JOIN memories m ON m.rowid = f.rowid"
            " WHERE m.rowid IS NULL OR m.lane_id != ? OR m.status != 'live' OR f.body IS NOT m.body"
            " ORDER BY f.rowid",
            (lane,),
        ):
            if memory is None:
                problems.append(
                    Problem("error", "fts_row_orphan", f"indexes rowid {rowid}, which has no memory", name, str(rowid))
                )
            elif m_owner != owner_of.get(lane):
                problems.append(
                    Problem(
                        "error",
                        "fts_row_other_owner",
                        f"{owner_of.get(lane)!r}'s full-text table {name} indexes memory {memory} of another owner",
                        "memories",
                        memory,
                    )
                )
            elif m_lane != lane:
                problems.append(
                    Problem(
                        "error",
                        "fts_row_other_lane",
                        f"lane {lane}'s full-text table indexes memory {memory} of another lane",
                        "memories",
                        memory,
                    )
                )
            elif status != "live":
                problems.append(
                    Problem("error", "fts_row_orphan", f"indexes memory {memory}, which is {status}", name, str(rowid))
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
            f"{counted(unembedded, 'live memory')} {agree(unembedded, 'waits', 'wait')} for a vector"
            f" (the curation worker embeds {agree(unembedded, 'it', 'them')})",
            "memories",
        )
    if unembeddable:
        yield Problem(
            "info",
            "memories_unembeddable",
            f"{counted(unembeddable, 'live memory')} the model could not embed (full-text search finds them;"
            " `memwal-mcp reindex` tries again)",
            "memories",
        )
