"""`memwal-mcp migrate --to postgresql://...` as a user runs it: the console script as a
subprocess, a real SQLite file as the source, a real PostgreSQL (pgserver) as the target.

- a migration SIGKILLed part-way leaves whole batches (`check` on PostgreSQL is clean), and
  running it again finishes, says "verified", and duplicates nothing; the file's bytes never
  change;
- after it, recall on PostgreSQL answers as on the SQLite file (vectors copied), the moved
  tokens open an HTTP server's door and the revoked one does not;
- with another model configured the memories are embedded again, and the report says so;
- a bad URL, an unreachable server, an older file or no file at all: a one-line error.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import psycopg
import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.normalize import norm_key
from memwal_mcp.service import MemoryService
from memwal_mcp.store import StoreWriter, open_store
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.store.sqlite.migrations import apply_migrations, load_migrations, migrations_dir
from memwal_mcp.tokens import hash_token, new_token

from ..e2e.conftest import base_env
from ..e2e.http_helpers import initialize, serve
from ..store_contract.helpers import T0, remember

pytestmark = pytest.mark.slow

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
FACTS = [
    "User prefers dark roast coffee, no sugar",
    "The office coffee machine is broken until Friday",
    "Alice takes the 8:15 train to Lisbon on Mondays",
    "The staging database runs PostgreSQL 16 on port 5433",
    "Bob is allergic to peanuts and shellfish",
    "Project atlas ships its beta on 2026-12-15",
]
QUERIES = ["what coffee does the user like", "when does Alice travel", "which port does staging use", "allergies"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def migrate(tmp_path: Path, source: Path, url: str, *args: str, model: str | None = "none") -> subprocess.Popen[str]:
    env = base_env(tmp_path, source)
    if model is not None:
        env["MEMWAL_EMBEDDING__MODEL"] = model
    return subprocess.Popen(
        [str(MEMWAL), "migrate", "--db", str(source), "--to", url, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def one_line_error(code: int, err: str, *fragments: str) -> str:
    assert code != 0
    message = err.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert message.startswith("memwal-mcp: error: "), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def pg(url: str, sql: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('memories')").fetchone() == (None,):
            return 0  # the first open has not made the schema yet
        row = conn.execute(sql).fetchone()
        assert row is not None
        return int(row[0])


# --- killed part-way, then finished -----------------------------------------------------------


MEMORIES = 1500


def _fill(w: StoreWriter) -> None:
    for i in range(MEMORIES):
        remember(w, "alice" if i % 3 else "bob", "default", f"Fact number {i} about rack {i % 97}", at=T0 + i)
    w.insert_token(hash_token(new_token()), "alice", ("read", "write"), "laptop")


async def _build_many(path: Path) -> None:
    store = open_store(load_settings(db_path=path))
    await store.open()
    try:
        await store.write(_fill)
    finally:
        await store.close()


def test_a_killed_migration_resumes_and_ends_verified_without_duplicates(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "memwal.db"
    anyio.run(_build_many, source)
    digest = sha256(source)

    proc = migrate(tmp_path, source, pg_url, "--batch-size", "10")
    try:
        while proc.poll() is None and pg(pg_url, "SELECT count(*) FROM memories") == 0:
            time.sleep(0.01)  # the first batches are committing
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    moved = pg(pg_url, "SELECT count(*) FROM memories")
    assert 0 < moved < MEMORIES, "the kill came after the migration had finished"
    check = subprocess.run(
        [str(MEMWAL), "check"],
        env={**base_env(tmp_path, source), "MEMWAL_DB_URL": pg_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr  # whole batches: every link has both ends

    code, out, err = finished(migrate(tmp_path, source, pg_url))
    assert code == 0, out + err
    assert "already there (skipped)" in out and "verified" in out.splitlines()[-1], out
    assert pg(pg_url, "SELECT count(*) FROM memories") == MEMORIES
    assert pg(pg_url, "SELECT count(DISTINCT id) FROM memories") == MEMORIES
    assert pg(pg_url, "SELECT count(*) FROM remember_jobs") == MEMORIES
    assert pg(pg_url, "SELECT count(*) FROM api_tokens") == 1
    assert sha256(source) == digest

    code, out, err = finished(migrate(tmp_path, source, pg_url))  # once more: nothing to add
    assert code == 0 and "added nothing" in out, out + err
    assert sha256(source) == digest


# --- recall and tokens after it ----------------------------------------------------------------


async def _build_curated(path: Path, embedder: FastEmbedEmbedder | None) -> dict[str, str]:
    """The facts remembered and curated through the service; two tokens, one revoked."""
    settings = load_settings(db_path=path, **({} if embedder else {"embedding": {"model": "none"}}))
    service = MemoryService(settings, embedder=embedder)
    async with service.running():
        for fact in FACTS:
            await service.remember("local", fact, wait_ms=30_000)
        tokens = {"live": new_token(), "revoked": new_token()}
        for name, token in tokens.items():
            await service.store.write(lambda w, t=token, n=name: w.insert_token(hash_token(t), "local", ("read",), n))
        assert await service.store.write(lambda w: w.revoke_token(hash_token(tokens["revoked"])))
    return tokens


async def _recalls(settings_kwargs: dict, embedder: FastEmbedEmbedder) -> list[list[tuple[str, float]]]:
    service = MemoryService(load_settings(**settings_kwargs), embedder=embedder)
    async with service.running(worker=False):
        answers = []
        for query in QUERIES:
            result = await service.recall("local", query, limit=3)
            answers.append([(hit.id, hit.score) for hit in result.hits])
    return answers


async def _door(tmp_path: Path, env: dict[str, str], tokens: dict[str, str]) -> dict[str, int]:
    with serve(env, tmp_path) as served:
        async with httpx2.AsyncClient(timeout=30) as client:
            return {name: (await initialize(client, served.mcp, token)).status_code for name, token in tokens.items()}


def test_recall_on_postgres_answers_as_on_the_file_and_tokens_work(
    tmp_path: Path, pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    source = tmp_path / "memwal.db"
    tokens = anyio.run(_build_curated, source, embedder)
    code, out, err = finished(migrate(tmp_path, source, pg_url, model=None))  # the bundled model: copied
    assert code == 0, out + err
    assert f"vectors: {len(FACTS)} copied" in out and "verified" in out, out

    on_file = anyio.run(_recalls, {"db_path": source}, embedder)
    on_pg = anyio.run(_recalls, {"db_url": pg_url}, embedder)
    for query, here, there in zip(QUERIES, on_file, on_pg):
        assert here and [i for i, _ in here] == [i for i, _ in there], (query, here, there)
        for (_, a), (_, b) in zip(here, there):
            assert abs(a - b) <= 0.02, (query, here, there)  # the lexical leg's BM25 differs a little

    env = {**base_env(tmp_path, source), "MEMWAL_DB_URL": pg_url, "MEMWAL_EMBEDDING__MODEL": "none"}
    del env["MEMWAL_DB_PATH"]
    assert anyio.run(_door, tmp_path, env, tokens) == {"live": 200, "revoked": 401}


def test_another_model_reembeds_and_says_so(tmp_path: Path, pg_url: str, embedder: FastEmbedEmbedder) -> None:
    source = tmp_path / "memwal.db"
    anyio.run(_build_curated, source, None)  # embeddings off: the file holds no vector
    code, out, err = finished(migrate(tmp_path, source, pg_url, model=None))
    assert code == 0, out + err
    assert f"vectors: {len(FACTS)} re-embedded (the file holds no vectors" in out and "verified" in out, out
    assert pg(pg_url, "SELECT count(*) FROM memories WHERE status = 'live' AND vector_model IS NULL") == 0
    (top,) = anyio.run(_recalls_one, pg_url, embedder)
    assert top == "User prefers dark roast coffee, no sugar"


async def _recalls_one(url: str, embedder: FastEmbedEmbedder) -> list[str]:
    service = MemoryService(load_settings(db_url=url), embedder=embedder)
    async with service.running(worker=False):
        result = await service.recall("local", "favourite hot drink", limit=1)
    return [hit.text for hit in result.hits]


# --- refusals ----------------------------------------------------------------------------------


def _older_file(path: Path, folder: Path) -> None:
    """A file at the schema of the release before this one (every migration but the last)."""
    folder.mkdir()
    newest = max(m.version for m in load_migrations())
    for file in migrations_dir().iterdir():
        if file.suffix == ".sql" and int(file.name.split("_", 1)[0]) < newest:
            shutil.copy(file, folder / file.name)
    conn = connect(path)
    try:
        apply_migrations(conn, folder)
    finally:
        conn.close()


def test_bad_url_unreachable_server_older_file_and_no_file_are_one_line_errors(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "memwal.db"
    anyio.run(_build_curated, source, None)

    code, _, err = finished(migrate(tmp_path, source, "mysql://root@localhost/memwal"))
    assert code == 2
    one_line_error(code, err, "--to", "postgresql://")

    code, _, err = finished(migrate(tmp_path, source, "postgresql://memwal@127.0.0.1:9/memwal"))
    one_line_error(code, err, "cannot", "PostgreSQL", "127.0.0.1")
    assert "Traceback" not in err

    older = tmp_path / "older.db"
    _older_file(older, tmp_path / "older-migrations")
    digest = sha256(older)
    code, _, err = finished(migrate(tmp_path, older, pg_url))
    one_line_error(code, err, "older schema", str(older))
    assert sha256(older) == digest

    code, _, err = finished(migrate(tmp_path, tmp_path / "nothing.db", pg_url))
    one_line_error(code, err, "no database file", "nothing.db")
    assert not (tmp_path / "nothing.db").exists()
    assert os.path.exists(source)


# --- writes to the file after a run --------------------------------------------------------------


async def _change_file(path: Path) -> tuple[str, str]:
    """Forget the first fact and merge new words into the second, as servers on the file would."""
    service = MemoryService(load_settings(db_path=path, embedding={"model": "none"}))
    async with service.running(worker=False):
        rows = await service.store.read(lambda r: r.list_memories("local", None, None, None, 10))
        by_text = {row.body: row for row in rows}
        gone, changed = by_text[FACTS[0]], by_text[FACTS[1]]
        await service.forget("local", gone.id)
        body = FACTS[1] + "; the new one arrives Monday"

        def merge(w: StoreWriter) -> None:
            with w.transaction():
                w.replace_body(
                    pk=changed.pk,
                    lane=changed.lane,
                    body=body,
                    key=norm_key(body),
                    vector=None,
                    model_id=None,
                    decision="updated",
                    job_id=None,
                    llm_model=None,
                    guard=None,
                    now=T0 + 100,
                )

        await service.store.write(merge)
    return gone.id, changed.id


def test_a_forget_in_the_file_is_carried_and_a_changed_memory_is_named(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "memwal.db"
    anyio.run(_build_curated, source, None)
    code, out, err = finished(migrate(tmp_path, source, pg_url))
    assert code == 0 and "verified" in out, out + err
    gone, changed = anyio.run(_change_file, source)

    code, out, err = finished(migrate(tmp_path, source, pg_url))
    message = one_line_error(code, err, "not verified", f"memory {changed!r} differs", "body")
    assert code == 1 and gone not in message, message
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT status, body FROM memories WHERE id = %s", (gone,)).fetchone() == ("forgotten", "")
        assert conn.execute("SELECT count(*) FROM forgotten WHERE memory_id = %s", (gone,)).fetchone() == (1,)
