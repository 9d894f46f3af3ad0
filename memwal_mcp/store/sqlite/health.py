"""Can the store run here, and what state is a database in: the probes behind `memwal-mcp doctor`.

Each probe returns a frozen record and does not raise for a broken part: the broken part is
the answer, which doctor explains with its fix. The general fields are ones any backend can
fill (a PostgreSQL backend: the server version, pgvector, its text search, its migrations);
what only SQLite has (which sqlite3 module, why the interpreter's own one was passed over)
lives in the optional `sqlite` part.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ...errors import StoreUnavailable
from .connection import _load_vec, connect, sqlite_module
from .integrity import Problem, StoreCounts, check_store
from .integrity_common import _table_exists
from .migrations import load_migrations
from .vectors import vector_model

BACKEND = "sqlite"
VECTOR_EXTENSION = "sqlite-vec"
# The kNN probe stores two orthogonal vectors and asks for the one nearest to (1, 0.1).
KNN_EXPECTED = 1


@dataclass(frozen=True, slots=True)
class SQLiteDriver:
    """SQLite only: which sqlite3-compatible module the store runs on, and why that one."""

    module: str | None  # "sqlite3", "sqlean", "pysqlite3.dbapi2"; None when none loads sqlite-vec
    stdlib_version: str  # the SQLite inside the interpreter's own sqlite3
    stdlib_refusal: str | None  # why the interpreter's sqlite3 cannot serve (no sqlite-vec); None when it can


@dataclass(frozen=True, slots=True)
class VectorSearch:
    extension: str  # "sqlite-vec" (PostgreSQL: "pgvector")
    version: str | None  # as the loaded extension reports itself; None when it did not load
    error: str | None  # why it does not load or cannot answer a query
    nearest: int | None  # the row a two-vector kNN query returned; KNN_EXPECTED is right

    @property
    def works(self) -> bool:
        return self.error is None and self.nearest == KNN_EXPECTED


@dataclass(frozen=True, slots=True)
class FullTextSearch:
    error: str | None  # why no full-text index with the stemming tokenizer can be made
    stemming: bool  # a search for "deploy" finds "Deploys"
    secure_delete: bool  # deleting a row removes its terms from the index's pages at once (SQLite 3.44+)


@dataclass(frozen=True, slots=True)
class EngineHealth:
    """What the database engine can do on this installation, before any database is opened."""

    backend: str  # "sqlite"
    version: str | None  # of the engine the store uses (PostgreSQL: the server's); None when unavailable
    unavailable: str | None  # why the store cannot run here at all; then vectors and fulltext are None
    vectors: VectorSearch | None
    fulltext: FullTextSearch | None
    sqlite: SQLiteDriver | None = None

    @property
    def usable(self) -> bool:
        """Memories can be stored and searched: worth opening the database."""
        return self.unavailable is None and self.vectors is not None and self.vectors.works


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    version: int
    name: str


@dataclass(frozen=True, slots=True)
class SchemaState:
    available: tuple[SchemaVersion, ...]  # the migrations this memwal-mcp ships, oldest first
    applied: tuple[SchemaVersion, ...]  # the ones the database records, oldest first

    @property
    def unknown(self) -> tuple[SchemaVersion, ...]:
        """Applied by a newer memwal-mcp: this one cannot read the database safely."""
        known = {m.version for m in self.available}
        return tuple(m for m in self.applied if m.version not in known)

    @property
    def pending(self) -> tuple[SchemaVersion, ...]:
        """Not applied yet: the next open applies them."""
        applied = {m.version for m in self.applied}
        return tuple(m for m in self.available if m.version not in applied)

    @property
    def current(self) -> bool:
        return not self.unknown and not self.pending


@dataclass(frozen=True, slots=True)
class StoredVectors:
    """The model the database's vectors were made with: a query must be embedded by it."""

    model: str
    dim: int


@dataclass(frozen=True, slots=True)
class Integrity:
    """What `memwal-mcp check` reports, from one snapshot."""

    problems: tuple[Problem, ...]
    counts: StoreCounts


@dataclass(frozen=True, slots=True)
class DatabaseHealth:
    location: str  # the file (PostgreSQL: the URL without its password)
    unopenable: str | None  # why it cannot be opened; then the fields below are None
    vectors: StoredVectors | None  # None also before the first vector is stored
    schema: SchemaState | None
    integrity: Integrity | None  # only for a current schema: the rules describe that one


@dataclass(frozen=True, slots=True)
class StoreHealth:
    engine: EngineHealth
    database: DatabaseHealth | None  # None when there is no database yet, or the engine is not usable


def _stdlib_refusal() -> str | None:
    """Why the interpreter's own sqlite3 cannot load sqlite-vec, or None when it can."""
    conn = sqlite3.connect(":memory:")
    try:
        if not hasattr(conn, "enable_load_extension"):
            return "was built without extension loading"
        try:
            _load_vec(conn)
        except Exception as exc:
            return f"cannot load sqlite-vec ({exc})"
        return None
    finally:
        conn.close()


def probe_vectors() -> VectorSearch:
    """Load sqlite-vec as the store does and run a kNN query in a partitioned table like the store's."""
    try:
        conn = connect(Path(":memory:"))
        try:
            (version,) = conn.execute("SELECT vec_version()").fetchone()
            conn.execute(
                "CREATE VIRTUAL TABLE v USING vec0( lane_id integer partition key, e float[2] distance_metric=cosine)"
            )
            conn.execute("INSERT INTO v (rowid, lane_id, e) VALUES (1, 1, '[1, 0]'), (2, 1, '[0, 1]')")
            row = conn.execute("SELECT rowid FROM v WHERE e MATCH '[1, 0.1]' AND k = 1 AND lane_id = 1").fetchone()
        finally:
            conn.close()
    except Exception as exc:
        return VectorSearch(VECTOR_EXTENSION, None, str(exc), None)
    return VectorSearch(VECTOR_EXTENSION, str(version), None, None if row is None else int(row[0]))


def probe_fulltext() -> FullTextSearch:
    """Make an FTS5 table with the store's tokenizer; check stemming and secure-delete."""
    conn = sqlite_module().connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2')")
        conn.execute("INSERT INTO t (rowid, body) VALUES (1, 'Deploys go out on Fridays')")
        stemming = conn.execute("SELECT rowid FROM t WHERE t MATCH 'deploy'").fetchone() == (1,)
        try:
            conn.execute("INSERT INTO t (t, rank) VALUES ('secure-delete', 1)")
            secure = True
        except Exception:
            secure = False
    except Exception as exc:
        return FullTextSearch(str(exc), stemming=False, secure_delete=False)
    finally:
        conn.close()
    return FullTextSearch(None, stemming=stemming, secure_delete=secure)


def probe_engine() -> EngineHealth:
    refusal = _stdlib_refusal()
    try:
        module = sqlite_module()
    except StoreUnavailable as exc:
        driver = SQLiteDriver(None, sqlite3.sqlite_version, refusal)
        return EngineHealth(BACKEND, None, str(exc), None, None, driver)
    driver = SQLiteDriver(module.__name__, sqlite3.sqlite_version, refusal)
    return EngineHealth(BACKEND, module.sqlite_version, None, probe_vectors(), probe_fulltext(), driver)


def _schema(conn: sqlite3.Connection) -> SchemaState:
    available = tuple(SchemaVersion(m.version, m.name) for m in sorted(load_migrations(), key=lambda m: m.version))
    rows = (
        conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        if _table_exists(conn, "schema_migrations")
        else []
    )
    return SchemaState(available, tuple(SchemaVersion(int(version), str(name)) for version, name in rows))


def probe_database(path: Path) -> DatabaseHealth | None:
    """Open an existing database file and read its state; None when there is no file to open.

    Never creates the file: doctor reports that a first start will.
    """
    path = path.expanduser()
    if not path.is_file():
        return None
    location = str(path.absolute())
    try:
        conn = connect(path)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except Exception as exc:
        return DatabaseHealth(location, f"{type(exc).__name__}: {exc}", None, None, None)
    try:
        # A schema behind the first migration has no embedding_meta to read the model from.
        stored = vector_model(conn) if _table_exists(conn, "embedding_meta") else None
        schema = _schema(conn)
        integrity = None
        if schema.current:
            problems, counts = check_store(conn)
            integrity = Integrity(tuple(problems), counts)
    finally:
        conn.close()
    vectors = StoredVectors(stored[0], int(stored[1])) if stored is not None else None
    return DatabaseHealth(location, None, vectors, schema, integrity)


def probe(path: Path) -> StoreHealth:
    """The engine, then the database at `path` if the engine can serve it."""
    engine = probe_engine()
    return StoreHealth(engine, probe_database(path) if engine.usable else None)
