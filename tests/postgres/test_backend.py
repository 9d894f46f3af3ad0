"""Choosing the PostgreSQL backend, and what only it has to say: where its data is, that backups
are pg_dump's, that a forget leaves no old row version behind once no snapshot needs it, and
that `check` holds its counts to the rows."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import psycopg
import pytest
from pydantic import ValidationError

from memwal_mcp.cli import _settings, build_parser
from memwal_mcp.config import load_settings
from memwal_mcp.errors import InvalidInput
from memwal_mcp.store import open_store
from memwal_mcp.store.postgres.backend import PostgresStore
from memwal_mcp.store.postgres.connection import redacted
from memwal_mcp.store.sqlite.backend import SQLiteStore

from ..store_contract.helpers import T0, lane_of, remember

URL = "postgresql://memwal:s3cret@db.example.com:5432/memwal"


def test_a_url_selects_postgres_and_none_keeps_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(open_store(load_settings(db_path=tmp_path / "m.db")), SQLiteStore)
    assert isinstance(open_store(load_settings(db_url=URL)), PostgresStore)
    monkeypatch.setenv("MEMWAL_DB_URL", URL)
    assert load_settings().database_url == URL
    monkeypatch.delenv("MEMWAL_DB_URL")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\nurl = "{URL}"\n', encoding="utf-8")
    assert load_settings(config_file=config).database_url == URL
    # The environment (and a flag) win over the file, as for every setting.
    monkeypatch.setenv("MEMWAL_DB_URL", "postgresql://other/db")
    assert load_settings(config_file=config).database_url == "postgresql://other/db"
    args = build_parser().parse_args(["--db-url", "postgresql://flag/db", "stats"])
    assert _settings(args).database_url == "postgresql://flag/db"


def test_a_url_that_is_not_postgres_is_refused() -> None:
    with pytest.raises(ValidationError, match="postgresql://"):
        load_settings(db_url="mysql://host/db")


def test_the_location_never_shows_the_password() -> None:
    assert open_store(load_settings(db_url=URL)).location == "postgresql://memwal@db.example.com:5432/memwal"
    assert redacted("postgresql://host/db?sslmode=require") == "postgresql://host/db?sslmode=require"
    assert open_store(load_settings(db_url=URL)).own_files() == ()


def test_the_sqlite_path_never_loads_the_postgres_driver(tmp_path: Path) -> None:
    code = (
        "import sys, anyio; from memwal_mcp.config import load_settings; from memwal_mcp.store import open_store\n"
        f"s = open_store(load_settings(db_path={str(tmp_path / 'm.db')!r})); anyio.run(s.open); anyio.run(s.close)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool', 'pgvector')))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


async def test_backup_names_pg_dump(pg_store: PostgresStore, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="pg_dump"):
        await pg_store.backup(tmp_path / "copy.db", force=False, verify=True)


async def test_an_unreachable_server_is_a_clear_error() -> None:
    from memwal_mcp.errors import StoreUnavailable

    store = PostgresStore("postgresql://nobody:pw@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(StoreUnavailable, match="cannot connect to PostgreSQL at postgresql://nobody@127.0.0.1:1/none"):
        await store.open()


SECRET = "Vault code for the ZYXWVUT cabinet is 4417"


def _rows_holding(url: str, word: str) -> int:
    """Rows whose text holds the word: memory bodies, job texts, and the lane's indexed words.
    (Dead row versions are what `wal_cleared` reports on: VACUUM VERBOSE counts those it keeps.)"""
    with psycopg.connect(url) as conn:
        live = conn.execute(
            "SELECT (SELECT count(*) FROM memories WHERE body ILIKE %(w)s)"
            " + (SELECT count(*) FROM remember_jobs WHERE text ILIKE %(w)s)"
            " + (SELECT count(*) FROM lane_terms WHERE lexeme = lower(%(x)s))",
            {"w": f"%{word}%", "x": word},
        ).fetchone()
        return int(live[0]) if live else 0


async def test_a_forget_leaves_no_row_and_no_word_behind(pg_store: PostgresStore, pg_url: str) -> None:
    secret = await pg_store.write(remember, "alice", "default", SECRET)
    await pg_store.write(remember, "alice", "default", "The cabinet is in the hall", at=T0 + 1)
    assert _rows_holding(pg_url, "zyxwvut") == 3  # the memory, its job and its indexed word
    done = await pg_store.write(lambda w: w.forget_memory("alice", secret.id))
    assert done.wal_cleared
    assert _rows_holding(pg_url, "zyxwvut") == 0
    lane = await pg_store.read(lane_of, "alice", "default")
    with psycopg.connect(pg_url) as conn:  # the word shared with a live memory keeps its count
        assert conn.execute(
            "SELECT docs FROM lane_terms WHERE lane_id = %s AND lexeme = 'cabinet'", (lane,)
        ).fetchone() == (1,)


async def test_a_forget_waits_out_a_transaction_that_ends_within_its_bound(
    pg_store: PostgresStore, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A snapshot held for a moment (another replica's query) must not make an ordinary forget
    answer "not yet from every file": it waits, as the SQLite backend waits for its readers; a
    snapshot held past the bound is named in the log (pid, application)."""
    secret = await pg_store.write(remember, "alice", "default", SECRET)
    with psycopg.connect(pg_url, application_name="brief-reader") as reader:
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        timer = threading.Timer(0.3, reader.rollback)
        timer.start()
        try:
            done = await pg_store.write(lambda w: w.forget_memory("alice", secret.id))
        finally:
            timer.join()
    assert done.wal_cleared
    other = await pg_store.write(remember, "alice", "default", "The spare key is under the blue flowerpot")
    with psycopg.connect(pg_url, application_name="long-reader") as reader:
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        with caplog.at_level(logging.WARNING):
            kept = await pg_store.write(lambda w: w.forget_memory("alice", other.id))
        reader.rollback()
    assert not kept.wal_cleared
    assert "long-reader, idle in transaction" in caplog.text


async def test_an_older_snapshot_defers_the_erasure_until_it_ends(pg_store: PostgresStore, pg_url: str) -> None:
    secret = await pg_store.write(remember, "alice", "default", SECRET)
    with psycopg.connect(pg_url, application_name="old-snapshot") as reader:
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert reader.execute("SELECT count(*) FROM memories").fetchone() == (1,)  # its snapshot is taken
        done = await pg_store.write(lambda w: w.forget_memory("alice", secret.id))
        assert not done.wal_cleared  # the old versions are still visible to `reader`
        # The CLI's warning names the session to end, and says once what forgetting again does.
        rerun = pg_store.erasure_rerun(f"memwal-mcp forget {secret.id}")
        assert f"(held by pid {reader.info.backend_pid} (old-snapshot, idle in transaction since " in rerun, rerun
        assert rerun.endswith(f"; when it ends, run `memwal-mcp forget {secret.id}` again to VACUUM them away")
        assert rerun.count("VACUUM") == 1, rerun
        pg_store.owe_erasure()
        assert pg_store.erasure_pending and not await pg_store.settle_erasure(0)
        # Forgetting again, as the warning advises, must not claim the old versions gone yet.
        again = await pg_store.write(lambda w: w.forget_memory("alice", secret.id))
        assert again.already and not again.wal_cleared
        assert "VACUUM removes them" in pg_store.erasure_kept
        reader.execute("ROLLBACK")
    with anyio.fail_after(30):  # the store retries on its own, with no call to prompt it
        while pg_store.erasure_pending:
            await anyio.sleep(0.05)
    assert await pg_store.settle_erasure(0)
    again = await pg_store.write(lambda w: w.forget_memory("alice", secret.id))
    assert again.already and again.wal_cleared


async def test_check_is_clean_and_catches_a_count_gone_wrong(pg_store: PostgresStore, pg_url: str) -> None:
    def build(w) -> None:  # type: ignore[no-untyped-def]
        for i in range(5):
            remember(w, "alice", "default", f"fact number {i} about tea", at=T0 + i)
        w.insert_job("alice", "default", "queued tea fact", None, T0 + 9)

    await pg_store.write(build)
    problems, counts = await pg_store.read(lambda r: r.check())
    assert (
        [p for p in problems if p.severity != "info"] == []
        and counts.memories == {"live": 5}
        and counts.jobs == {"done": 5, "queued": 1}
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE lanes SET live_count = live_count + 1")
        conn.execute("UPDATE lane_terms SET docs = docs + 1 WHERE lexeme = 'tea'")
    problems, _ = await pg_store.read(lambda r: r.check())
    assert {p.code for p in problems if p.severity == "error"} == {"lane_live_counts", "lane_term_counts"}
