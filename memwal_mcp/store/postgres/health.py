"""What doctor reports about a PostgreSQL store: the server, pgvector, the words, the schema.

Fills the same records as the SQLite backend's probes (store/sqlite/health.py defines them)
and, like them, never raises for a broken part and never creates anything: it reads the
schema the migrations made, and a kNN probe runs on a temporary table.
"""

from __future__ import annotations

from psycopg import Connection

from ..sqlite.health import (
    KNN_EXPECTED,
    DatabaseHealth,
    EngineHealth,
    FullTextSearch,
    Integrity,
    SchemaState,
    SchemaVersion,
    StoredVectors,
    StoreHealth,
    VectorSearch,
)
from . import integrity, lane_indexes, migrations, vectors, words
from .connection import connect, redacted

BACKEND = "postgresql"
VECTOR_EXTENSION = "pgvector"


def _vectors(conn: Connection) -> VectorSearch:
    try:
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is None:
            return VectorSearch(VECTOR_EXTENSION, None, "the vector extension is not installed in this database", None)
        with conn.transaction():
            conn.execute("CREATE TEMPORARY TABLE memwal_knn_probe (id int, e vector(2)) ON COMMIT DROP")
            conn.execute("INSERT INTO memwal_knn_probe VALUES (1, '[1, 0]'), (2, '[0, 1]')")
            nearest = conn.execute("SELECT id FROM memwal_knn_probe ORDER BY e <=> '[1, 0.1]' LIMIT 1").fetchone()
    except Exception as exc:
        return VectorSearch(VECTOR_EXTENSION, None, f"{type(exc).__name__}: {exc}", None)
    return VectorSearch(VECTOR_EXTENSION, str(row[0]), None, None if nearest is None else int(nearest[0]))


def _fulltext() -> FullTextSearch:
    # Words are tokenized and stemmed in Python (words.py); the server only matches them.
    return FullTextSearch(None, stemming=words.tokens("Deploys") == words.tokens("deploy"), secure_delete=False)


def probe(url: str, hnsw_min_rows: int = lane_indexes.DEFAULT_MIN_ROWS) -> StoreHealth:
    location = redacted(url)
    try:
        conn = connect(url)
    except Exception as exc:
        return StoreHealth(EngineHealth(BACKEND, None, str(exc), None, None), None)
    try:
        version = conn.execute("SHOW server_version").fetchone()
        engine = EngineHealth(BACKEND, str(version[0]) if version else None, None, _vectors(conn), _fulltext())
        if not engine.usable:
            return StoreHealth(engine, None)
        available = tuple(SchemaVersion(m.version, m.name) for m in migrations.load_migrations())
        applied = tuple(SchemaVersion(v, n) for v, n in migrations.applied(conn))
        if not applied:
            return StoreHealth(engine, None)  # no memwal-mcp schema yet: the first start makes it
        schema = SchemaState(available, applied)
        stored = vectors.vector_model(conn)
        found = None
        if schema.current:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                problems, counts = integrity.check_store(conn)
                problems += lane_indexes.problems(conn, hnsw_min_rows)
            finally:
                conn.rollback()
            found = Integrity(tuple(problems), counts)
        kept = StoredVectors(stored[0], stored[1]) if stored else None
        return StoreHealth(engine, DatabaseHealth(location, None, kept, schema, found))
    except Exception as exc:
        engine = EngineHealth(BACKEND, None, None, None, None)
        return StoreHealth(engine, DatabaseHealth(location, f"{type(exc).__name__}: {exc}", None, None, None))
    finally:
        conn.close()


__all__ = ["KNN_EXPECTED", "probe"]
