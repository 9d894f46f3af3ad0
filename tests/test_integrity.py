"""`memwal-mcp check` and `memwal-mcp backup`: a realistic store passes; each kind of damage is named.

One store is built per module with the real model and a scripted LLM (so it holds
every curation decision: created, occurrence, skipped, updated, consolidated,
appended, forgotten, and an undo). Each corruption is raw SQL on a copy of it,
and the verdict comes from the `memwal-mcp` console script in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import fts
from memwal_mcp.store.sqlite.backup import backup_database
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.store.sqlite.integrity import find_problems
from tests.environment import isolated
from tests.scripted_llm import Reply, ScriptedLLM

MEMWAL = Path(sys.executable).parent / "memwal-mcp"

# Proposal -> the scripted LLM's answer; anything else is CREATE.
CONSOLIDATED = "The user is allergic to peanuts (a peanut allergy; an allergy to peanuts)."
ANSWERS = {
    "The user has an allergy to peanuts": "CONSOLIDATE {all}\n---\n" + CONSOLIDATED,
    "The user is allergic to peanuts!": "SKIP C1",
    "Standup is at 09:30 every weekday in room 4": "UPDATE C1\n---\nStandup is at 09:30 every weekday, in room 4",
    "The staging cluster runs in eu-west-1 since 2026-05-01": "UPDATE C1\n---\nThe staging cluster runs in Europe",
}


def _answer(request: dict) -> Reply:
    prompt = request["messages"][1]["content"]
    proposal = prompt.split("PROPOSAL:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    labels = re.findall(r"^\[(C\d+)\]", prompt, re.M)
    return Reply(ANSWERS.get(proposal, "CREATE").replace("{all}", " ".join(labels)))


async def _remember(svc: MemoryService, owner: str, text: str, namespace: str = "default"):
    job = (await svc.remember(owner, text, namespace=namespace, wait_ms=15000)).job
    assert job.status == "done", job
    return job


@pytest.fixture(scope="module")
async def pristine(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedEmbedder) -> AsyncIterator[Path]:
    """A closed store after a realistic mix of remembers, duplicates, owners, namespaces, merges and forgets."""
    folder = tmp_path_factory.mktemp("pristine")
    with isolated(folder), ScriptedLLM(_answer) as llm:
        settings = load_settings(db_path=folder / "memwal.db", llm={"base_url": llm.base_url, "model": "scripted"})
        svc = MemoryService(settings, embedder=embedder)
        async with svc.running():
            decisions = []
            for owner, namespace, text in [
                ("alice", "default", "User prefers dark roast coffee"),
                ("alice", "default", "  user prefers DARK roast coffee "),  # an exact repeat: occurrence
                ("alice", "default", "Deploys go out on Fridays from us-east-1"),
                ("alice", "default", "The user is allergic to peanuts"),
                ("alice", "default", "User has a peanut allergy"),
                ("alice", "default", "The user has an allergy to peanuts"),  # consolidates the two above
                ("alice", "default", "The user is allergic to peanuts!"),  # skipped
                ("alice", "work", "Standup is at 09:30 every weekday"),
                ("alice", "work", "Standup is at 09:30 every weekday in room 4"),  # updated
                ("alice", "work", "The staging cluster runs in eu-west-1"),
                ("alice", "work", "The staging cluster runs in eu-west-1 since 2026-05-01"),  # appended
                ("bob", "default", "User prefers dark roast coffee"),  # same text, another owner: its own memory
                ("bob", "default", "Bob's locker code is 4417"),
                ("bob", "default", "Bob's locker code is 4417"),
                ("bob", "notes", "Quarterly report is due 2026-07-01"),
            ]:
                decisions.append((await _remember(svc, owner, text, namespace)).decision)
            peanuts = (await svc.recall("alice", "peanut allergy", limit=1)).hits[0].id
            # Undoing the consolidation brings back the retired memory and the proposal it folded in.
            undone = await svc.undo("alice", peanuts)
            assert len(undone.restored) == 2
            deploys = (await svc.recall("alice", "Fridays deploys", limit=1)).hits[0].id
            await svc.forget("alice", deploys)
            locker = (await svc.recall("bob", "locker code", limit=1)).hits[0].id
            await svc.forget("bob", locker)
            await svc.remember("carol", "Carol works from Lisbon", wait_ms=15000)
    expected = {"created", "occurrence", "skipped", "updated", "consolidated", "appended"}
    assert expected <= set(decisions), decisions  # the geometry every decision relies on still holds
    yield folder / "memwal.db"


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    return backup_database(pristine, tmp_path / "copy.db", verify=False).path


def cli_env(db: Path) -> dict[str, str]:
    """The environment of a `memwal-mcp` run on `db`: no inherited MEMWAL_* settings, no user config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    return env | {"MEMWAL_DB_PATH": str(db), "XDG_CONFIG_HOME": str(db.parent / "xdg-config")}


def run_cli(*args: str, db: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], capture_output=True, text=True, env=cli_env(db), timeout=timeout)


Verdict = tuple[int, str, str]  # exit code, stdout, stderr


def run_cli_side_by_side(runs: dict[str, tuple[tuple[str, ...], Path]]) -> dict[str, Verdict]:
    """Several `memwal-mcp` runs at once: most of each one's time is start-up."""
    started = {
        name: subprocess.Popen(
            [str(MEMWAL), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(db)
        )
        for name, (args, db) in runs.items()
    }
    verdicts: dict[str, Verdict] = {}
    for name, process in started.items():
        stdout, stderr = process.communicate(timeout=120)
        verdicts[name] = (process.returncode, stdout, stderr)
    return verdicts


def sql(db: Path, statement: str, params: tuple = ()) -> None:
    conn = connect(db)
    try:
        conn.execute(statement, params)
    finally:
        conn.close()


def one(db: Path, query: str, params: tuple = ()) -> tuple:
    conn = connect(db)
    try:
        row = conn.execute(query, params).fetchone()
    finally:
        conn.close()
    assert row is not None, query
    return row


# --- a healthy store --------------------------------------------------------------------


@pytest.mark.slow
def test_a_realistic_store_passes_check(pristine: Path, copy: Path):
    conn = connect(copy)
    try:
        assert [p for p in find_problems(conn) if p.severity != "info"] == []
        decisions = {d for (d,) in conn.execute("SELECT DISTINCT decision FROM remember_jobs")}
    finally:
        conn.close()
    # The one CONSOLIDATE was undone, which gives its proposal back its own memory: its job says "created".
    assert {"created", "occurrence", "skipped", "updated", "appended", "forgotten"} <= decisions

    done = run_cli("check", db=copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^check ok: 0 errors, 0 warnings, \d+ info \(\d+ jobs?, \d+ memor(?:y|ies)", done.stdout, re.M)


# --- damage, one kind at a time -----------------------------------------------------------


def fts_table(db: Path, memory_or_lane: str | int) -> str:
    """The full-text table of a lane, or of a memory's lane."""
    conn = connect(db)
    try:
        if isinstance(memory_or_lane, str):
            (memory_or_lane,) = conn.execute("SELECT lane_id FROM memories WHERE id = ?", (memory_or_lane,)).fetchone()
        return fts.tables(conn)[memory_or_lane]
    finally:
        conn.close()


def _delete_fts_row(db: Path) -> str:
    rowid, memory = one(db, "SELECT rowid, id FROM memories WHERE status = 'live' AND owner = 'alice' LIMIT 1")
    sql(db, f"DELETE FROM {fts_table(db, memory)} WHERE rowid = ?", (rowid,))
    return memory


def _fts_row_in_another_owners_table(db: Path) -> str:
    """Bob's full-text table also indexes one of alice's memories."""
    rowid, memory, body, lane = one(
        db, "SELECT rowid, id, body, lane_id FROM memories WHERE status = 'live' AND owner = 'alice' LIMIT 1"
    )
    (bobs,) = one(db, "SELECT id FROM lanes WHERE owner = 'bob' LIMIT 1")
    sql(db, f"INSERT INTO {fts_table(db, bobs)} (rowid, body) VALUES (?, ?)", (rowid, body))
    return memory


def _fts_row_in_another_lane(db: Path) -> str:
    rowid, memory = one(
        db, "SELECT rowid, id FROM memories WHERE status = 'live' AND owner = 'alice' AND namespace = 'work' LIMIT 1"
    )
    (default,) = one(db, "SELECT id FROM lanes WHERE owner = 'alice' AND namespace = 'default'")
    (body,) = one(db, "SELECT body FROM memories WHERE id = ?", (memory,))
    sql(db, f"DELETE FROM {fts_table(db, memory)} WHERE rowid = ?", (rowid,))
    sql(db, f"INSERT INTO {fts_table(db, default)} (rowid, body) VALUES (?, ?)", (rowid, body))
    return memory


def _delete_vector_row(db: Path) -> str:
    rowid, memory = one(db, "SELECT rowid, id FROM memories WHERE status = 'live' AND vector_model IS NOT NULL LIMIT 1")
    sql(db, "DELETE FROM memory_vectors WHERE rowid = ?", (rowid,))
    return memory


def _job_into_another_owners_memory(db: Path) -> str:
    (job,) = one(db, "SELECT id FROM remember_jobs WHERE owner = 'alice' AND decision = 'occurrence' LIMIT 1")
    (bobs,) = one(db, "SELECT id FROM memories WHERE owner = 'bob' AND status = 'live' LIMIT 1")
    sql(db, "UPDATE remember_jobs SET memory_id = ? WHERE id = ?", (bobs, job))
    return job


def _memory_into_another_lane(db: Path) -> str:
    (memory,) = one(db, "SELECT id FROM memories WHERE owner = 'alice' AND namespace = 'default' AND status = 'live'")
    (work,) = one(db, "SELECT id FROM lanes WHERE owner = 'alice' AND namespace = 'work'")
    sql(db, "UPDATE memories SET lane_id = ? WHERE id = ?", (work, memory))
    return memory


def _revision_of_a_missing_memory(db: Path) -> str:
    conn = connect(db)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")  # the damage a foreign-key-less writer could do
        revision = conn.execute(
            "INSERT INTO memory_revisions (memory_rowid, body, decision, created_at) VALUES (99999, 'x', 'updated', 0)"
        ).lastrowid
    finally:
        conn.close()
    return str(revision)


def _two_jobs_created_one_memory(db: Path) -> str:
    first, memory, lane = one(
        db,
        "SELECT id, memory_id, lane_id FROM remember_jobs WHERE decision = 'created'"
        " AND owner = 'alice' AND namespace = 'work' ORDER BY seq LIMIT 1",
    )
    (other,) = one(
        db,
        "SELECT id FROM remember_jobs WHERE decision = 'created' AND lane_id = ? AND id != ? ORDER BY seq LIMIT 1",
        (lane, first),
    )
    sql(db, "UPDATE remember_jobs SET memory_id = ? WHERE id = ?", (memory, other))
    return memory


def _queue_a_job_two_hours_ago(db: Path) -> str:
    (lane,) = one(db, "SELECT id FROM lanes WHERE owner = 'carol'")
    hours_ago = time.time() - 2 * 3600
    sql(
        db,
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, created_at, updated_at)"
        " VALUES ('j_stale', 'carol', 'default', ?, 'Carol likes tea', ?, ?)",
        (lane, hours_ago, hours_ago),
    )
    return str(lane)


DAMAGE: dict[str, tuple[Callable[[Path], str], str]] = {
    "delete an FTS row": (_delete_fts_row, "fts_row_missing"),
    "index a memory in another owner's FTS table": (_fts_row_in_another_owners_table, "fts_row_other_owner"),
    "index a memory under another lane": (_fts_row_in_another_lane, "fts_row_other_lane"),
    "delete a vector row": (_delete_vector_row, "vector_row_missing"),
    "point a job at another owner's memory": (_job_into_another_owners_memory, "job_memory_other_owner"),
    "move a memory to another lane": (_memory_into_another_lane, "memory_lane_crossed"),
    "a revision for a missing memory": (_revision_of_a_missing_memory, "revision_orphan"),
    "two jobs claim to have created one memory": (_two_jobs_created_one_memory, "memory_created_twice"),
}


@pytest.fixture(scope="module")
def damaged_verdicts(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Verdict]]:
    """`memwal-mcp check` on one damaged copy per kind of damage, the subprocesses run side by side."""
    refs: dict[str, str] = {}
    dbs: dict[str, Path] = {}
    for name, (corrupt, _) in DAMAGE.items():
        db = backup_database(pristine, tmp_path_factory.mktemp("damaged") / "copy.db", verify=False).path
        refs[name], dbs[name] = corrupt(db), db
    runs = {name: (("check",), db) for name, db in dbs.items()}
    # Two more runs ride along: a path with no database, and a store with a stale queue.
    runs["no database"] = (("check",), tmp_path_factory.mktemp("nothing") / "typo.db")
    stale = backup_database(pristine, tmp_path_factory.mktemp("stale") / "copy.db", verify=False).path
    refs["stale queue"] = _queue_a_job_two_hours_ago(stale)
    runs["stale queue"] = (("check", "--json"), stale)
    verdicts = run_cli_side_by_side(runs)
    return {name: (refs.get(name, ""), verdicts[name]) for name in runs}


@pytest.mark.slow
def test_check_of_a_path_with_no_database_fails(damaged_verdicts):
    _, (returncode, stdout, stderr) = damaged_verdicts["no database"]
    assert returncode == 1, stdout + stderr
    assert "database_missing" in stdout and "no database at" in stdout


@pytest.mark.slow
def test_an_old_queue_is_a_warning_and_check_still_passes(damaged_verdicts):
    lane, (returncode, stdout, stderr) = damaged_verdicts["stale queue"]
    assert returncode == 0, stdout + stderr
    report = json.loads(stdout)
    stale = [p for p in report["problems"] if p["code"] == "jobs_queued_long"]
    assert report["ok"] and len(stale) == 1 and stale[0]["severity"] == "warning" and stale[0]["ref"] == lane
    assert "2.0 h" in stale[0]["detail"]


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_each_kind_of_damage_is_named_and_fails_check(damaged_verdicts, damage: str):
    ref, (returncode, stdout, stderr) = damaged_verdicts[damage]
    code = DAMAGE[damage][1]
    assert returncode == 1, stdout + stderr
    lines = stdout.splitlines()
    assert any(line.startswith("error") and f" {code} " in line and f" {ref}:" in line for line in lines), stdout
    assert re.match(r"check FAILED: [1-9]\d* errors?, ", lines[-1]), lines[-1]


def _forgotten_text_survives(db: Path) -> str:
    (memory,) = one(db, "SELECT id FROM memories WHERE status = 'forgotten' LIMIT 1")
    sql(db, "UPDATE memories SET body = 'still here' WHERE id = ?", (memory,))
    return memory


def _retired_into_another_owner(db: Path) -> str:
    (memory,) = one(
        db, "SELECT id FROM memories WHERE owner = 'alice' AND namespace = 'work' AND status = 'live' LIMIT 1"
    )
    (bobs,) = one(db, "SELECT id FROM memories WHERE owner = 'bob' AND status = 'live' LIMIT 1")
    conn = connect(db)
    try:
        conn.execute("UPDATE memories SET status = 'retired', retired_into = ? WHERE id = ?", (bobs, memory))
        (rowid,) = conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory,)).fetchone()
        (lane,) = conn.execute("SELECT lane_id FROM memories WHERE id = ?", (memory,)).fetchone()
        conn.execute(f"DELETE FROM {fts.tables(conn)[lane]} WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM memory_vectors WHERE rowid = (SELECT rowid FROM memories WHERE id = ?)", (memory,))
    finally:
        conn.close()
    return memory


def _stale_fts_body(db: Path) -> str:
    rowid, memory = one(db, "SELECT rowid, id FROM memories WHERE status = 'live' AND owner = 'carol'")
    sql(db, f"UPDATE {fts_table(db, memory)} SET body = 'Carol works from Porto' WHERE rowid = ?", (rowid,))
    return memory


def _forgotten_job_keeps_text(db: Path) -> str:
    (job,) = one(db, "SELECT id FROM remember_jobs WHERE decision = 'forgotten' LIMIT 1")
    sql(db, "UPDATE remember_jobs SET text = 'the erased fact' WHERE id = ?", (job,))
    return job


def _merge_without_revision(db: Path) -> str:
    (job,) = one(db, "SELECT id FROM remember_jobs WHERE decision = 'updated'")
    sql(db, "DELETE FROM memory_revisions WHERE job_id = ?", (job,))
    return job


def _revision_merging_another_owners_memory(db: Path) -> str:
    (revision,) = one(db, "SELECT id FROM memory_revisions WHERE merged_ids IS NOT NULL AND merged_ids != '' LIMIT 1")
    (bobs,) = one(db, "SELECT id FROM memories WHERE owner = 'bob' AND status = 'live' LIMIT 1")
    sql(db, "UPDATE memory_revisions SET merged_ids = merged_ids || ',' || ? WHERE id = ?", (bobs, revision))
    return str(revision)


def _vector_of_a_forgotten_memory(db: Path) -> str:
    (rowid,) = one(db, "SELECT rowid FROM memories WHERE status = 'forgotten' AND owner = 'bob'")
    lane, vector = one(db, "SELECT lane_id, embedding FROM memory_vectors LIMIT 1")
    sql(db, "INSERT INTO memory_vectors (rowid, lane_id, embedding) VALUES (?, ?, ?)", (rowid, lane, vector))
    return str(rowid)


def _carols_job(db: Path, job: str, status: str, decision: str, text: str) -> str:
    """A job of carol's in no memory, as only damage (or a forget while queued) leaves one."""
    (lane,) = one(db, "SELECT id FROM lanes WHERE owner = 'carol'")
    now = time.time()
    sql(
        db,
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, status, decision, created_at, updated_at)"
        " VALUES (?, 'carol', 'default', ?, ?, ?, ?, ?, ?)",
        (job, lane, text, status, decision, now, now),
    )
    return job


def _forgotten_while_queued_keeps_text(db: Path) -> str:
    return _carols_job(db, "j_kept", "done", "forgotten", "Carol likes tea")


def _forgotten_job_still_queued(db: Path) -> str:
    return _carols_job(db, "j_requeued", "queued", "forgotten", "")


def _done_job_in_no_memory(db: Path) -> str:
    return _carols_job(db, "j_nowhere", "done", "created", "Carol likes tea")


@pytest.mark.parametrize(
    ("corrupt", "code"),
    [
        (_forgotten_while_queued_keeps_text, "forgotten_job_keeps_text"),
        (_forgotten_job_still_queued, "forgotten_job_not_done"),
        (_done_job_in_no_memory, "job_without_memory"),
        (_forgotten_text_survives, "forgotten_memory_keeps_text"),
        (_retired_into_another_owner, "retired_into_crossed"),
        (_stale_fts_body, "fts_body_stale"),
        (_forgotten_job_keeps_text, "forgotten_job_keeps_text"),
        (_merge_without_revision, "merge_job_without_revision"),
        (_vector_of_a_forgotten_memory, "vector_row_orphan"),
        (_revision_merging_another_owners_memory, "revision_merged_crossed"),
    ],
    ids=lambda value: value if isinstance(value, str) else value.__name__.strip("_"),
)
def test_more_damage_is_named(copy: Path, corrupt: Callable[[Path], str], code: str):
    ref = corrupt(copy)
    conn = connect(copy)
    try:
        problems = find_problems(conn)
    finally:
        conn.close()
    assert any(p.severity == "error" and p.code == code and p.ref == ref for p in problems), problems


def test_an_unembeddable_memory_is_info_and_a_stray_vector_table_a_warning(copy: Path):
    rowid, memory = one(copy, "SELECT rowid, id FROM memories WHERE status = 'live' AND owner = 'carol'")
    conn = connect(copy)
    try:
        # What the backlog pass does with a body the model refuses (vectors.mark_unembeddable).
        conn.execute("UPDATE memories SET vector_model = '-' WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (rowid,))
        conn.execute(
            "CREATE VIRTUAL TABLE memory_vectors_old USING vec0(lane_id integer partition key,"
            " embedding float[384] distance_metric=cosine)"
        )
        problems = {p.code: p for p in find_problems(conn)}
    finally:
        conn.close()
    assert problems["memories_unembeddable"].severity == "info"
    assert problems["vector_table_leftover"].severity == "warning"
    assert problems["vector_table_leftover"].table == "memory_vectors_old"
    assert not [p for p in problems.values() if p.severity == "error"], problems


# --- backup -----------------------------------------------------------------------------------


def _job_ids(conn: sqlite3.Connection) -> set[str]:
    return {job for (job,) in conn.execute("SELECT id FROM remember_jobs")}


@pytest.mark.slow
async def test_backup_while_a_service_writes_is_consistent_and_complete(service: MemoryService, tmp_path: Path):
    filler = "Release notes for the billing service, version 4.2: " + "invoices rounding fix. " * 2000
    for index in range(12):  # half a megabyte of journal, so the copy is not instant
        await service.remember("local", f"{filler} ({index})", namespace=f"n{index % 3}")
    written: list[str] = []
    stop = anyio.Event()

    async def keep_remembering() -> None:
        index = 0
        while not stop.is_set():
            written.append((await service.remember("local", f"Concurrent fact number {index}")).job.id)
            index += 1
            await anyio.sleep(0)

    target = tmp_path / "backup.db"
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(keep_remembering)
        while len(written) < 20:
            await anyio.sleep(0.005)
        committed = await service.store.db.read(_job_ids)  # everything committed before the backup starts
        during = len(written)
        result = await anyio.to_thread.run_sync(lambda: backup_database(service.store.db.path, target))
        during = len(written) - during
        stop.set()

    assert all(p.severity != "error" for p in result.problems), result.problems
    conn = connect(target)
    try:
        copied = _job_ids(conn)
        assert [p for p in find_problems(conn) if p.severity == "error"] == []
    finally:
        conn.close()
    assert committed <= copied, sorted(committed - copied)[:5]
    assert during > 0  # remembers kept committing while the copy was made
    done = run_cli("check", db=target)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_backup_cli_refuses_to_overwrite_without_force(pristine: Path, tmp_path: Path):
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"someone else's file")
    refused = run_cli("backup", str(taken), db=pristine)
    assert refused.returncode == 2 and "already exists" in refused.stderr and "--force" in refused.stderr
    assert taken.read_bytes() == b"someone else's file"

    forced = run_cli("backup", str(taken), "--force", "--json", db=pristine)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    report = json.loads(forced.stdout)
    assert report["path"] == str(taken) and report["checked"] is True
    assert all(p["severity"] == "info" for p in report["problems"])
    conn = connect(taken)
    try:
        assert [p for p in find_problems(conn) if p.severity != "info"] == []
    finally:
        conn.close()
    assert not list(tmp_path.glob(".*.partial*"))  # no staging files left behind


# --- a race check once found elsewhere ---------------------------------------------------------------


def test_the_backlog_pass_never_gives_a_forgotten_memory_a_vector(tmp_path: Path):
    import numpy as np

    from memwal_mcp.store.sqlite import jobs, memories, vectors
    from memwal_mcp.store.sqlite.migrations import apply_migrations
    from memwal_mcp.store.sqlite.views import SQLiteWriter

    conn = connect(tmp_path / "memwal.db")
    try:
        apply_migrations(conn)
        vectors.ensure_vector_table(conn, "demo", 4)
        job, _ = jobs.insert_job(conn, "local", "default", "Vault code is 1234", None, time.time())
        lane = jobs.lane_id(conn, "local", "default")
        conn.execute("BEGIN")
        rowid, memory = memories.create_memory(  # made while the model was unavailable: no vector yet
            conn,
            owner="local",
            namespace="default",
            lane=lane,
            body=job.text,
            key="vault code is 1234",
            source_job_id=job.id,
            vector=None,
            model_id=None,
            now=time.time(),
        )
        jobs.mark_done(conn, job.id, "created", memory, time.time())
        conn.execute("COMMIT")
        # CurationWorker._embed_backlog: read the backlog, embed it off the writer (a forget lands meanwhile), write.
        backlog = vectors.unembedded(conn, 256)
        SQLiteWriter(conn).forget_memory("local", memory)
        vectors.set_vectors(conn, [(r, l, b, np.full(4, 0.5, dtype=np.float32)) for r, l, b in backlog], "demo")

        assert [p.code for p in find_problems(conn) if p.severity == "error"] == []
        assert conn.execute("SELECT COUNT(*) FROM memory_vectors WHERE rowid = ?", (rowid,)).fetchone() == (0,)
    finally:
        conn.close()


def test_a_drifted_lane_live_count_is_a_warning(copy: Path):
    (lane,) = one(copy, "SELECT id FROM lanes WHERE owner = 'carol'")
    sql(copy, "UPDATE lanes SET live_count = live_count + 3 WHERE id = ?", (lane,))
    conn = connect(copy)
    try:
        problems = find_problems(conn)
    finally:
        conn.close()
    assert [p.code for p in problems if p.severity != "info"] == ["lane_live_count_drift"], problems
    assert problems[0].ref == str(lane) or any(p.ref == str(lane) for p in problems)
