"""The store's health probes (`store.health`), each on a real SQLite file in tmp_path.

They are what `memwal-mcp doctor` explains: what the engine can do on this machine, and
what state a database file is in, without creating or changing it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memwal_mcp.store.sqlite.connection import connect, sqlite_module
from memwal_mcp.store.sqlite.health import (
    BACKEND,
    KNN_EXPECTED,
    SchemaVersion,
    StoredVectors,
    probe,
    probe_database,
    probe_engine,
)
from memwal_mcp.store.sqlite.migrations import apply_migrations, load_migrations, migrations_dir
from memwal_mcp.store.sqlite.vectors import ensure_vector_table

SHIPPED = tuple(SchemaVersion(m.version, m.name) for m in sorted(load_migrations(), key=lambda m: m.version))


def _migrated(path: Path, folder: Path | None = None) -> Path:
    conn = connect(path)
    try:
        apply_migrations(conn, folder)
    finally:
        conn.close()
    return path


def _execute(path: Path, *statements: str) -> None:
    conn = connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def test_the_engine_on_this_machine_serves_vectors_and_stemmed_full_text():
    engine = probe_engine()
    module = sqlite_module()
    assert engine.backend == BACKEND == "sqlite" and engine.unavailable is None and engine.usable
    assert engine.version == module.sqlite_version
    assert engine.sqlite is not None and engine.sqlite.module == module.__name__
    assert engine.sqlite.stdlib_version == sqlite3.sqlite_version
    if engine.sqlite.stdlib_refusal is not None:  # the interpreter's sqlite3 was passed over, with the reason
        refusal = engine.sqlite.stdlib_refusal
        assert module is not sqlite3 and ("extension loading" in refusal or "cannot load sqlite-vec" in refusal)
    assert engine.vectors is not None and engine.vectors.works and engine.vectors.error is None
    assert engine.vectors.nearest == KNN_EXPECTED and engine.vectors.version
    assert engine.vectors.extension == "sqlite-vec" and engine.vectors.version.startswith("v")
    assert engine.fulltext is not None and engine.fulltext.error is None and engine.fulltext.stemming


def test_no_file_means_nothing_to_probe_and_nothing_is_created(tmp_path: Path):
    path = tmp_path / "new" / "memwal.db"
    assert probe_database(path) is None
    store = probe(path)
    assert store.engine.usable and store.database is None
    assert not path.exists() and not path.parent.exists()


def test_a_fresh_database_is_current_clean_and_has_no_vectors_yet(tmp_path: Path):
    path = _migrated(tmp_path / "memwal.db")
    store = probe(path)
    database = store.database
    assert database is not None and database.unopenable is None
    assert database.location == str(path.absolute())
    assert database.schema is not None and database.schema.current
    assert database.schema.applied == database.schema.available == SHIPPED
    assert database.schema.pending == database.schema.unknown == ()
    assert database.vectors is None
    assert database.integrity is not None and database.integrity.problems == ()
    assert database.integrity.counts.summary() == "0 jobs, 0 memories (0 live), 0 lanes"


def test_the_model_that_made_the_stored_vectors_is_named(tmp_path: Path):
    path = _migrated(tmp_path / "memwal.db")
    conn = connect(path)
    try:
        ensure_vector_table(conn, "test/model-8", 8)
    finally:
        conn.close()
    database = probe_database(path)
    assert database is not None and database.vectors == StoredVectors("test/model-8", 8)


def test_damage_is_reported_with_the_counts(tmp_path: Path):
    path = _migrated(tmp_path / "memwal.db")
    _execute(
        path,
        "INSERT INTO lanes (id, owner, namespace) VALUES (1, 'local', 'default')",
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, status, decision, memory_id,"
        " created_at, updated_at) VALUES ('j_1', 'local', 'default', 1, 'x', 'done', 'created', 'm_gone', 0, 0)",
    )
    database = probe_database(path)
    assert database is not None and database.integrity is not None
    missing = [p for p in database.integrity.problems if p.code == "job_memory_missing"]
    assert [(p.severity, p.ref) for p in missing] == [("error", "j_1")]
    assert database.integrity.counts.lanes == 1 and database.integrity.counts.jobs == {"done": 1}


def test_an_older_schema_lists_what_is_pending_and_is_not_checked(tmp_path: Path):
    first = tmp_path / "only-the-first"
    first.mkdir()
    shutil.copy(migrations_dir() / f"{SHIPPED[0].name}.sql", first)
    path = _migrated(tmp_path / "memwal.db", first)
    database = probe_database(path)
    assert database is not None and database.schema is not None and not database.schema.current
    assert database.schema.applied == SHIPPED[:1] and database.schema.pending == SHIPPED[1:]
    assert database.schema.unknown == () and database.integrity is None
    assert probe_database(path) == database  # nothing applied by looking


def test_a_schema_from_a_newer_release_is_named_and_not_checked(tmp_path: Path):
    path = _migrated(tmp_path / "memwal.db")
    _execute(path, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '999_from_the_future', 0)")
    database = probe_database(path)
    assert database is not None and database.schema is not None
    assert database.schema.unknown == (SchemaVersion(999, "999_from_the_future"),)
    assert database.schema.pending == () and not database.schema.current and database.integrity is None


def test_an_empty_sqlite_file_has_every_migration_pending(tmp_path: Path):
    path = tmp_path / "memwal.db"
    path.touch()
    database = probe_database(path)
    assert database is not None and database.unopenable is None and database.vectors is None
    assert database.schema is not None and database.schema.applied == () and database.schema.pending == SHIPPED
    assert database.integrity is None


@pytest.mark.parametrize(
    "content",
    [b"not a database, just text\n" * 200, b"SQLite format 3\x00" + b"\xff" * 4080],
    ids=["text", "bad-header"],
)
def test_a_file_that_is_not_a_database_is_unopenable_and_left_as_it_was(tmp_path: Path, content: bytes):
    path = tmp_path / "memwal.db"
    path.write_bytes(content)
    database = probe_database(path)
    assert database is not None and database.unopenable is not None
    assert database.unopenable.startswith("DatabaseError: ") and "\n" not in database.unopenable
    assert database.schema is None and database.integrity is None and database.vectors is None
    assert path.read_bytes() == content


def _memwal(path: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """`memwal-mcp COMMAND` on the database at `path`, none of this shell's MEMWAL_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")} | {"MEMWAL_DB_PATH": str(path)}
    executable = str(Path(sys.executable).parent / "memwal-mcp")
    return subprocess.run([executable, *command], env=env, cwd=path.parent, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [["recall", "coffee"], ["remember", "User likes tea", "--wait-ms", "0"]])
def test_a_command_on_a_file_that_is_not_a_database_says_so_in_one_line(tmp_path: Path, command: list[str]):
    """It printed SQLite's DatabaseError with a 40-line traceback (a server the same, before `initialize`)."""
    path = tmp_path / "notes.db"
    path.write_bytes(b"garbage\n")
    done = _memwal(path, *command)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"memwal-mcp: error: cannot open the database {path}: file is not a database\n"
    assert path.read_bytes() == b"garbage\n"


def test_a_new_file_another_connection_locked_before_it_was_migrated_says_try_again(tmp_path: Path):
    """It ended in "cannot open the database ...: database is locked"; the README promises that no
    caller sees SQLite's "database is locked", and how a lock held too long is said."""
    path = tmp_path / "memwal.db"
    holder = sqlite3.connect(path, isolation_level=None)  # a rollback journal: switching to WAL needs the lock
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE held (x)")
    try:
        done = _memwal(path, "list")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"memwal-mcp: error: the database {path} stayed locked by another process for 5s; try again\n"
