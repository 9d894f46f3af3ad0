"""Numbered migrations on real database files: applied once, in order, atomically."""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memwal_mcp.errors import StoreUnavailable
from memwal_mcp.store.sqlite import fts
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.store.sqlite.jobs import ensure_lane
from memwal_mcp.store.sqlite.migrations import apply_migrations, load_migrations, migrations_dir

SHIPPED = [m.name for m in load_migrations()]


def recorded(conn: Any) -> list[tuple[int, str]]:
    return conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()


def table_names(conn: Any) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memwal.db"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A private copy of the shipped migrations, to add files to."""
    target = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), target)
    return target


def test_shipped_migrations_are_numbered_from_one() -> None:
    versions = [m.version for m in load_migrations()]
    assert versions == list(range(1, len(versions) + 1))
    assert len(versions) >= 2


def test_fresh_database_records_every_migration_once(db_path: Path) -> None:
    conn = connect(db_path)
    try:
        assert apply_migrations(conn) == SHIPPED
        rows = recorded(conn)
        assert [name for _, name in rows] == SHIPPED
        assert [version for version, _ in rows] == [m.version for m in load_migrations()]
        names = table_names(conn)
        assert {"lanes", "remember_jobs", "memories", "memory_revisions", "embedding_meta"} <= names
        assert "memories_fts" not in names  # replaced by one table per lane (migration 008)
    finally:
        conn.close()
    assert db_path.is_file()


def test_reopening_applies_nothing(db_path: Path) -> None:
    conn = connect(db_path)
    apply_migrations(conn)
    first = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    conn.close()

    conn = connect(db_path)
    try:
        assert apply_migrations(conn) == []
        assert apply_migrations(conn) == []
        again = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
        assert again == first  # not re-recorded, not re-stamped
    finally:
        conn.close()


def test_an_up_to_date_file_opens_while_another_connection_writes(db_path: Path) -> None:
    """Opening took the write lock once per migration even with none to apply: a `recall` on a file
    another process held a write transaction on failed after 30 s, where a WAL reader never waits."""
    conn = connect(db_path)
    apply_migrations(conn)
    holder = connect(db_path)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE held (x)")
    try:
        conn.execute("PRAGMA busy_timeout = 200")  # a wait for the lock fails in 0.2 s, not 30
        assert apply_migrations(conn) == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        conn.close()


def test_new_numbered_file_applies_only_that_one(db_path: Path, folder: Path) -> None:
    conn = connect(db_path)
    try:
        apply_migrations(conn, folder)
        next_version = len(SHIPPED) + 1
        (folder / f"{next_version:03d}_add_notes.sql").write_text(
            "-- a later release adds a table\n"
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);\n"
            "INSERT INTO notes (body) VALUES ('seeded; with a semicolon');\n",
            encoding="utf-8",
        )
        (folder / "README.txt").write_text("not a migration", encoding="utf-8")
        (folder / "draft.sql").write_text("DROP TABLE memories;", encoding="utf-8")  # no number: ignored

        assert apply_migrations(conn, folder) == [f"{next_version:03d}_add_notes"]
        assert conn.execute("SELECT body FROM notes").fetchall() == [("seeded; with a semicolon",)]
        assert [v for v, _ in recorded(conn)] == list(range(1, next_version + 1))
        assert "memories" in table_names(conn)
        assert apply_migrations(conn, folder) == []
        assert conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_database_a_newer_version_migrated_is_refused(db_path: Path, folder: Path) -> None:
    """An older memwal-mcp must not run on a file a newer one upgraded: it would fail every
    job it curates on tables that changed (and recall would break)."""
    conn = connect(db_path)
    try:
        newer = folder / f"{len(SHIPPED) + 1:03d}_from_the_future.sql"
        newer.write_text("CREATE TABLE later (id INTEGER PRIMARY KEY);\n", encoding="utf-8")
        apply_migrations(conn, folder)
        newer.unlink()
        with pytest.raises(StoreUnavailable, match="upgraded by a newer memwal-mcp.*from_the_future"):
            apply_migrations(conn, folder)
    finally:
        conn.close()


def test_failing_migration_rolls_back_entirely(db_path: Path, folder: Path) -> None:
    next_version = len(SHIPPED) + 1
    broken = folder / f"{next_version:03d}_broken.sql"
    broken.write_text(
        "CREATE TABLE half_done (x INTEGER);\n"
        "INSERT INTO half_done VALUES (1);\n"
        "ALTER TABLE memories ADD COLUMN half_done_flag INTEGER;\n"
        "INSERT INTO no_such_table VALUES (1);\n",
        encoding="utf-8",
    )
    conn = connect(db_path)
    try:
        with pytest.raises(Exception, match="no_such_table") as caught:
            apply_migrations(conn, folder)
        assert type(caught.value).__name__ == "OperationalError"

        # the migrations before it committed; nothing of the broken one survives
        assert [name for _, name in recorded(conn)] == SHIPPED
        assert "half_done" not in table_names(conn)
        columns = [row[1] for row in conn.execute("PRAGMA table_info(memories)")]
        assert "half_done_flag" not in columns
        assert not conn.in_transaction

        # fixed file: it applies on the next start
        broken.write_text("CREATE TABLE half_done (x INTEGER);\n", encoding="utf-8")
        assert apply_migrations(conn, folder) == [f"{next_version:03d}_broken"]
        assert "half_done" in table_names(conn)
    finally:
        conn.close()


def test_failing_migration_leaves_other_connections_unaffected(db_path: Path, folder: Path) -> None:
    conn = connect(db_path)
    apply_migrations(conn)
    (folder / f"{len(SHIPPED) + 1:03d}_broken.sql").write_text(
        "CREATE TABLE half_done (x INTEGER);\nSELECT * FROM no_such_table;\n", encoding="utf-8"
    )
    with pytest.raises(Exception, match="no_such_table"):
        apply_migrations(conn, folder)
    conn.close()

    other = connect(db_path)
    try:
        assert "half_done" not in table_names(other)
        assert [name for _, name in recorded(other)] == SHIPPED
    finally:
        other.close()


def test_duplicate_numbers_are_refused(folder: Path) -> None:
    (folder / "001_again.sql").write_text("SELECT 1;", encoding="utf-8")
    with pytest.raises(ValueError, match="share a number"):
        load_migrations(folder)


def test_incomplete_statement_is_refused(db_path: Path, folder: Path) -> None:
    (folder / f"{len(SHIPPED) + 1:03d}_cut_off.sql").write_text("CREATE TABLE cut (x INTEGER)", encoding="utf-8")
    conn = connect(db_path)
    try:
        with pytest.raises(ValueError, match="incomplete SQL"):
            apply_migrations(conn, folder)
        assert "cut" not in table_names(conn)
        assert [name for _, name in recorded(conn)] == SHIPPED
    finally:
        conn.close()


def test_concurrent_first_open_applies_each_migration_once(db_path: Path) -> None:
    """Two servers starting on one new file at the same moment (Claude Desktop + an IDE)."""
    results: list[list[str]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def start() -> None:
        conn = connect(db_path)
        try:
            barrier.wait()
            results.append(apply_migrations(conn))
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    assert sorted(results[0] + results[1]) == sorted(SHIPPED)
    conn = connect(db_path)
    try:
        assert [name for _, name in recorded(conn)] == SHIPPED
    finally:
        conn.close()


# --- the schema the rest of the code relies on ---------------------------------


def _migrated(db_path: Path) -> Any:
    conn = connect(db_path)
    apply_migrations(conn)
    conn.execute("INSERT INTO lanes (owner, namespace) VALUES ('alice', 'default')")
    conn.execute("INSERT INTO lanes (owner, namespace) VALUES ('bob', 'default')")
    return conn


def _insert_job(conn: Any, owner: str, key: str | None) -> None:
    lane = conn.execute("SELECT id FROM lanes WHERE owner = ?", (owner,)).fetchone()[0]
    now = time.time()
    conn.execute(
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, created_at, updated_at)"
        " VALUES (?, ?, 'default', ?, 'a fact', ?, ?, ?)",
        (f"j_{time.perf_counter_ns():x}", owner, lane, key, now, now),
    )


def test_idempotency_index_definition(db_path: Path) -> None:
    conn = _migrated(db_path)
    try:
        row = conn.execute(
            "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'index' AND name = 'remember_jobs_owner_idempotency_key'"
        ).fetchone()
        assert row is not None, "the unique idempotency index is missing"
        table, sql = row
        assert table == "remember_jobs"
        flat = re.sub(r"\s+", " ", sql).upper()
        assert flat.startswith("CREATE UNIQUE INDEX")
        assert "(OWNER, IDEMPOTENCY_KEY)" in flat
        assert flat.endswith("WHERE IDEMPOTENCY_KEY IS NOT NULL")
    finally:
        conn.close()


def test_idempotency_index_rejects_duplicate_key_per_owner(db_path: Path) -> None:
    conn = _migrated(db_path)
    try:
        _insert_job(conn, "alice", "k-1")
        with pytest.raises(Exception, match="UNIQUE constraint failed") as caught:
            _insert_job(conn, "alice", "k-1")
        assert type(caught.value).__name__ == "IntegrityError"
        _insert_job(conn, "bob", "k-1")  # another owner may use the same key
        _insert_job(conn, "alice", "k-2")
        counts = conn.execute(
            "SELECT owner, COUNT(*) FROM remember_jobs WHERE idempotency_key = 'k-1' GROUP BY owner ORDER BY owner"
        ).fetchall()
        assert counts == [("alice", 1), ("bob", 1)]
    finally:
        conn.close()


def test_idempotency_index_allows_many_null_keys(db_path: Path) -> None:
    conn = _migrated(db_path)
    try:
        for _ in range(5):
            _insert_job(conn, "alice", None)
        assert conn.execute("SELECT COUNT(*) FROM remember_jobs WHERE idempotency_key IS NULL").fetchone()[0] == 5
    finally:
        conn.close()


def test_journal_mode_is_wal(db_path: Path) -> None:
    conn = connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    finally:
        conn.close()
    # WAL is a property of the file: a plain second opener sees it too
    conn = connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    finally:
        conn.close()


def test_sqlite_vec_is_loaded_and_usable(db_path: Path) -> None:
    conn = connect(db_path)
    try:
        version = conn.execute("SELECT vec_version()").fetchone()[0]
        assert re.match(r"^v\d+\.\d+", version), version
        conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[2] distance_metric=cosine)")
        conn.execute("INSERT INTO v (rowid, embedding) VALUES (1, '[1, 0]'), (2, '[0, 1]')")
        nearest = conn.execute("SELECT rowid FROM v WHERE embedding MATCH '[0.9, 0.1]' AND k = 1").fetchall()
        assert nearest == [(1,)]
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")  # FTS5 is there too
    finally:
        conn.close()


def test_autocommit_connection(db_path: Path) -> None:
    """Transactions are explicit: a statement outside BEGIN is durable at once for other connections."""
    conn = _migrated(db_path)
    other = connect(db_path)
    try:
        assert not conn.in_transaction
        assert other.execute("SELECT COUNT(*) FROM lanes").fetchone()[0] == 2
    finally:
        conn.close()
        other.close()


def test_a_database_from_before_008_gets_one_full_text_table_per_lane(db_path: Path, folder: Path) -> None:
    """A database written before 008: its shared FTS rows become per-lane tables, live memories only."""
    for later in folder.glob("*.sql"):
        if int(later.name[:3]) >= 8:
            later.unlink()
    conn = connect(db_path)
    try:
        apply_migrations(conn, folder)
        now = time.time()
        lanes: dict[tuple[str, str], int] = {}
        for owner, namespace in (("alice", "default"), ("alice", "work"), ("bob", "default")):
            lane = conn.execute("INSERT INTO lanes (owner, namespace) VALUES (?, ?)", (owner, namespace)).lastrowid
            lanes[owner, namespace] = lane
            for i, (body, status) in enumerate(
                [(f"{owner} keeps bees at {namespace}", "live"), (f"{owner} kept goats at {namespace}", "retired")]
            ):
                rowid = conn.execute(
                    "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, source_job_id,"
                    " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (f"m_{lane}{i}", owner, namespace, lane, body, body, status, f"j_{lane}{i}", now, now),
                ).lastrowid
                if status == "live":
                    conn.execute("INSERT INTO memories_fts (rowid, body) VALUES (?, ?)", (rowid, body))

        assert apply_migrations(conn) == [n for n in SHIPPED if int(n[:3]) >= 8]

        assert "memories_fts" not in table_names(conn)
        assert set(fts.tables(conn)) == set(lanes.values())
        assert "owner_fts" not in table_names(conn)
        alice = [lanes["alice", "default"], lanes["alice", "work"]]
        assert len(fts.search(conn, alice, '"bees"', 10)[0]) == 2
        assert len(fts.search(conn, alice[:1], '"bees"', 10)[0]) == 1
        assert len(fts.search(conn, [lanes["bob", "default"]], '"bees"', 10)[0]) == 1
        assert fts.search(conn, alice, '"goats"', 10) == ([], True)
    finally:
        conn.close()


def test_a_new_lane_gets_a_full_text_table(db_path: Path) -> None:
    conn = connect(db_path)
    try:
        apply_migrations(conn)
        lane = ensure_lane(conn, "carol", "notes")
        other = ensure_lane(conn, "carol", "work")
        assert list(fts.tables(conn)) == [lane, other]
        assert fts.search(conn, [lane], '"anything"', 5) == ([], True)
    finally:
        conn.close()


def test_011_replaces_the_per_owner_tables_by_per_lane_ones(db_path: Path, folder: Path) -> None:
    """A database of the previous release (per-owner FTS5 tables, 008-010) upgrades: the owner
    tables go, each lane gets its own holding exactly its live memories, and the lanes' live
    characters are counted."""
    for later in folder.glob("*.sql"):
        if int(later.name[:3]) >= 11:
            later.unlink()
    conn = connect(db_path)
    try:
        apply_migrations(conn, folder)
        now = time.time()
        lanes: dict[tuple[str, str], int] = {}
        conn.execute("BEGIN")
        for owner, namespace in (("alice", "default"), ("alice", "work"), ("bob", "default")):
            lane = conn.execute("INSERT INTO lanes (owner, namespace) VALUES (?, ?)", (owner, namespace)).lastrowid
            assert lane is not None
            lanes[owner, namespace] = lane
        for number, owner in enumerate(("alice", "bob"), start=1):  # what 008 made for each owner
            conn.execute("INSERT INTO owner_fts (id, owner) VALUES (?, ?)", (number, owner))
            conn.execute(
                f"CREATE VIRTUAL TABLE owner_fts_{number} USING fts5 (body, lane, tokenize = '{fts.TOKENIZE}')"
            )
        for (owner, namespace), lane in lanes.items():
            for i, (body, status) in enumerate(
                [(f"{owner} keeps bees at {namespace}", "live"), ("gone goats", "retired")]
            ):
                rowid = conn.execute(
                    "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, source_job_id,"
                    " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (f"m_{lane}{i}", owner, namespace, lane, body, body, status, f"j_{lane}{i}", now, now),
                ).lastrowid
                if status == "live":
                    number = 1 if owner == "alice" else 2
                    conn.execute(
                        f"INSERT INTO owner_fts_{number} (rowid, body, lane) VALUES (?, ?, ?)",
                        (rowid, body, f"l{lane}"),
                    )
        conn.execute("COMMIT")

        assert apply_migrations(conn) == [n for n in SHIPPED if int(n[:3]) >= 11]

        names = table_names(conn)
        assert not {"owner_fts", "owner_fts_1", "owner_fts_2"} & names
        assert set(fts.tables(conn)) == set(lanes.values())
        for (owner, namespace), lane in lanes.items():
            found, _ = fts.search(conn, [lane], '"bees"', 10)
            assert len(found) == 1 and fts.search(conn, [lane], '"goats"', 10) == ([], True)
            (count, chars) = conn.execute("SELECT live_count, live_chars FROM lanes WHERE id = ?", (lane,)).fetchone()
            assert (count, chars) == (1, len(f"{owner} keeps bees at {namespace}"))
    finally:
        conn.close()
