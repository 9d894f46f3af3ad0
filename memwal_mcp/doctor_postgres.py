"""doctor's checks of a PostgreSQL store: the server, pgvector, the word index, big lanes' indexes.

The SQLite checks (the interpreter's sqlite3, sqlite-vec, FTS5, the database file and its
folder) mean nothing for a server; these take their place. Like doctor.py, nothing here
prints or touches the database: the facts come from the store's probe (store/postgres/health.py).
"""

from __future__ import annotations

from typing import Any

from .doctor import Check
from .store.records import Problem
from .store.sqlite.health import EngineHealth, Integrity

LANE_INDEX_CODES = ("lane_index", "lane_index_building", "lane_index_pending", "lane_index_invalid")


def check_server(engine: EngineHealth, location: str) -> Check:
    data: dict[str, Any] = {"location": location, "server_version": engine.version}
    if engine.unavailable is not None:
        return Check(
            "postgresql",
            "fail",
            engine.unavailable,
            "start the server, or point MEMWAL_DB_URL (--db-url, [storage] url) at one that answers",
            data,
        )
    return Check("postgresql", "ok", f"PostgreSQL {engine.version} at {location}", data=data)


def check_pgvector(engine: EngineHealth) -> Check:
    vectors = engine.vectors
    if vectors is None:
        return Check("pgvector", "skip", "skipped: the server does not answer (see postgresql)")
    data = {"version": vectors.version}
    fix = "install pgvector on the server and CREATE EXTENSION vector in the database (or let memwal-mcp create it)"
    if vectors.error is not None:
        return Check("pgvector", "fail", f"pgvector does not work: {vectors.error}", fix, data)
    if not vectors.works:
        return Check("pgvector", "fail", f"pgvector {vectors.version} answered a kNN query wrongly", fix, data)
    return Check("pgvector", "ok", f"pgvector {vectors.version} answers kNN queries (HNSW for big lanes)", data=data)


def check_words(engine: EngineHealth) -> Check:
    fulltext = engine.fulltext
    if fulltext is None:
        return Check("words", "skip", "skipped: the server does not answer (see postgresql)")
    if not fulltext.stemming:
        return Check("words", "fail", "the word tokenizer does not stem", "reinstall py-rust-stemmers")
    return Check("words", "ok", "tsvector + GIN, words stemmed as SQLite's FTS5 porter tokenizer does")


def _lane_line(problem: Problem) -> str:
    return f"lane {problem.ref}: {problem.detail}"


def check_lane_indexes(integrity: Integrity | None, min_rows: int) -> Check:
    if integrity is None:
        return Check("lane indexes", "skip", "skipped: the schema is not current (see migrations)")
    lanes = [p for p in integrity.problems if p.code in LANE_INDEX_CODES]
    data = {"hnsw_min_rows": min_rows, "lanes": [{"lane": p.ref, "state": p.code, "detail": p.detail} for p in lanes]}
    if not lanes:
        return Check(
            "lane indexes",
            "ok",
            f"no lane holds hnsw_min_rows ({min_rows}) live memories: every vector search is an exact scan",
            data=data,
        )
    detail = f"{len(lanes)} big lane{'s' if len(lanes) != 1 else ''}: " + "; ".join(map(_lane_line, lanes))
    if any(p.code == "lane_index_invalid" for p in lanes):
        return Check(
            "lane indexes",
            "warn",
            detail,
            "a running memwal-mcp server rebuilds an interrupted index at its next write (searches are exact meanwhile)",
            data,
        )
    return Check("lane indexes", "ok", detail, data=data)
