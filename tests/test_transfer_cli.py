"""`memwal-mcp export`, `import` and `backup` as a user runs them: the console script as a
subprocess on real SQLite files.

- an export never writes onto the database (or its -wal/-shm, however the path is spelled)
  and never over a file without --force;
- an import cannot reach into another owner's records, and a refused import stores nothing;
- export -> import of a store holding every kind of record gives a store that `check` passes,
  with the same history for every memory, forgotten ones included, and no forgotten text;
- a malformed input file, or an unusable destination, is a one-line error, never a traceback.

The source store for the round trip is built through the service with the real model and
the scripted LLM (UPDATE and CONSOLIDATE need one); everything after that goes through the CLI.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite.connection import connect
from tests.databases import copy_closed_sqlite
from tests.environment import isolated
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.slow

MEMWAL = Path(sys.executable).parent / "memwal-mcp"

# Tables an import writes to (the rest are indexes, counters and settings).
STORED = ("lanes", "remember_jobs", "memories", "memory_revisions", "forgotten")


def cli(*args: str, db: Path, owner: str | None = None) -> subprocess.CompletedProcess[str]:
    """The console script with vectors off (nothing here depends on them) and only this test's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    env |= {"MEMWAL_DB_PATH": str(db), "MEMWAL_EMBEDDING__MODEL": "none"}
    if owner is not None:
        env["MEMWAL_OWNER"] = owner
    return subprocess.run([str(MEMWAL), *args], capture_output=True, text=True, env=env, timeout=120)


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def refused(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """A clean refusal: non-zero exit, one line on stderr naming the problem, no traceback."""
    assert done.returncode != 0, done.stdout
    message = done.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert message.startswith("memwal-mcp: error: "), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def dump(db: Path) -> dict[str, list[tuple]]:
    conn = connect(db)
    try:
        return {t: sorted(map(tuple, conn.execute(f"SELECT * FROM {t}").fetchall())) for t in STORED}
    finally:
        conn.close()


def check_passes(db: Path) -> None:
    done = cli("check", "--json", db=db)
    report = json.loads(done.stdout)
    errors = [p for p in report["problems"] if p["severity"] == "error"]
    warnings = [p for p in report["problems"] if p["severity"] == "warning"]
    assert done.returncode == 0 and not errors and not warnings, report["problems"]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- D5: the destination of an export ---------------------------------------------------------


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    db = tmp_path / "bk.db"
    ok(cli("remember", "The garage door code is 4417", db=db))
    return db


def test_export_never_writes_onto_the_database_or_its_sidecars(small_db: Path, tmp_path: Path):
    before = dump(small_db)
    link = tmp_path / "link.db"
    link.symlink_to(small_db)
    hard = tmp_path / "hard.db"
    os.link(small_db, hard)
    spellings = [
        small_db,
        Path(f"{small_db}-wal"),
        Path(f"{small_db}-shm"),
        link,
        hard,
        tmp_path / "sub" / ".." / small_db.name,
    ]
    (tmp_path / "sub").mkdir()
    for target in spellings:
        for force in ([], ["--force"]):
            refused(cli("export", str(target), *force, db=small_db), "is the database", "choose another path")
    # A database reached through a symlink keeps its sidecars beside the real file.
    refused(cli("export", f"{small_db}-wal", "--force", db=link), "is the database")
    # backup applies the same rules, through the same check.
    refused(cli("backup", f"{small_db}-wal", "--force", db=small_db), "is the database")

    assert small_db.read_bytes()[:16] == b"SQLite format 3\x00"
    assert dump(small_db) == before
    check_passes(small_db)
    found = json.loads(ok(cli("recall", "garage code", "--json", db=small_db)).stdout)
    assert [h["text"] for h in found["hits"]] == ["The garage door code is 4417"]
    assert not list(tmp_path.glob(".*partial*"))


def test_export_refuses_an_existing_file_unless_forced_and_replaces_it_whole(small_db: Path, tmp_path: Path):
    taken = tmp_path / "notes.jsonl"
    taken.write_text("someone's notes\n", encoding="utf-8")
    refused(cli("export", str(taken), db=small_db), str(taken), "already exists", "--force")
    assert taken.read_text(encoding="utf-8") == "someone's notes\n"

    ok(cli("export", str(taken), "--force", db=small_db))
    lines = taken.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "header" and len(lines) == 4  # header, lane, job, memory
    assert not list(tmp_path.glob(".*partial*"))  # written beside it and renamed: nothing left over

    fresh = tmp_path / "deeper" / "fresh.jsonl"  # a missing folder is a mistyped path: refused, not made
    refused(cli("export", str(fresh), db=small_db), str(tmp_path / "deeper"), "does not exist")
    assert not (tmp_path / "deeper").exists()


def test_reimporting_an_export_after_a_forget_says_the_forgotten_record_was_skipped(small_db: Path, tmp_path: Path):
    """The forgotten memory stays forgotten (its tombstone wins); the reply must not call it
    'already present', which reads as if it were still stored."""
    taken = tmp_path / "before.jsonl"
    ok(cli("export", str(taken), db=small_db))
    (hit,) = json.loads(ok(cli("recall", "garage code", "--json", db=small_db)).stdout)["hits"]
    ok(cli("forget", hit["id"], db=small_db))
    said = ok(cli("import", str(taken), db=small_db)).stdout
    assert "already here or forgotten here (skipped)" in said and "already present" not in said
    assert json.loads(ok(cli("recall", "garage code", "--json", db=small_db)).stdout)["hits"] == []


# --- D7: owner walls on import ------------------------------------------------------------------


@dataclass(frozen=True)
class Alice:
    db: Path
    memory: str  # alice's live memory
    job: str  # the job that made it
    forgotten: str  # a memory alice forgot
    history: str  # `history --json` of her live memory, as the CLI printed it once she was made


@pytest.fixture(scope="module")
def made_alice(tmp_path_factory: pytest.TempPathFactory) -> Alice:
    """Alice's store, made once through the CLI (four processes) for the module's tests."""
    folder = tmp_path_factory.mktemp("alice")
    db = folder / "team.db"
    with isolated(folder):  # module scope: isolated as conftest isolates each test
        made = json.loads(ok(cli("remember", "Alice's desk is by the window", "--json", db=db, owner="alice")).stdout)
        gone = json.loads(ok(cli("remember", "Alice's old locker code is 1999", "--json", db=db, owner="alice")).stdout)
        ok(cli("forget", gone["memory_id"], db=db, owner="alice"))
        history = ok(cli("history", made["memory_id"], "--json", db=db, owner="alice")).stdout
    return Alice(db, made["memory_id"], made["job_id"], gone["memory_id"], history)


@pytest.fixture
def alice(made_alice: Alice, tmp_path: Path) -> Alice:
    """A copy of alice's store of this test's own."""
    return replace(made_alice, db=copy_closed_sqlite(made_alice.db, tmp_path))


def bob_records(
    extra: list[dict[str, Any]] | None = None,
    *,
    retired_into: str | None = None,
    job_memory: str | None = None,
    merged: list[str] | None = None,
    revision_job: str | None = None,
    source_job: str | None = None,
    tombstone: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """A well-formed one-owner export of bob's: two memories (one consolidated into the other),
    with one reference optionally pointed elsewhere."""
    t = 1.8e9
    base = {"owner": "bob", "namespace": "default"}
    job = {**base, "type": "job", "status": "done", "created_at": t, "updated_at": t, "idempotency_key": None}
    records: list[dict[str, Any]] = [
        {"type": "header", "format": "memwal-export", "version": 1, "exported_at": t, "owners": ["bob"]},
        {"type": "lane", **base},
        {
            **job,
            "id": "j_b000000000000001",
            "text": "Bob parks on level 2",
            "decision": "created",
            "memory_id": "m_b000000000000001",
        },
        {
            **job,
            "id": "j_b000000000000002",
            "text": "Bob parks on level two",
            "decision": "created",
            "memory_id": "m_b000000000000002",
        },
        {
            **job,
            "id": "j_b000000000000003",
            "text": "Bob always parks on level 2",
            "decision": "consolidated",
            "memory_id": job_memory or "m_b000000000000001",
        },
        {
            **base,
            "type": "memory",
            "id": "m_b000000000000001",
            "body": "Bob parks on level 2 (level two)",
            "status": "live",
            "source_job_id": source_job or "j_b000000000000001",
            "created_at": t,
            "updated_at": t,
        },
        {
            **base,
            "type": "memory",
            "id": "m_b000000000000002",
            "body": "Bob parks on level two",
            "status": "retired",
            "retired_into": retired_into or "m_b000000000000001",
            "source_job_id": "j_b000000000000002",
            "created_at": t,
            "updated_at": t,
        },
        {
            "type": "revision",
            "owner": "bob",
            "memory_id": "m_b000000000000001",
            "body": "Bob parks on level 2",
            "decision": "consolidated",
            "job_id": revision_job or "j_b000000000000003",
            "merged_ids": merged or ["m_b000000000000002"],
            "created_at": t,
        },
    ]
    if tombstone is not None:
        records.append({"type": "tombstone", **base, "jobs": 0, "forgotten_at": t, **tombstone})
    return records + (extra or [])


@pytest.mark.parametrize(
    ("wrong", "line", "names"),
    [
        ({"retired_into": "ALICE"}, 7, "retired_into"),
        ({"job_memory": "ALICE"}, 5, "memory_id"),
        ({"job_memory": "ALICE_FORGOTTEN"}, 5, "memory_id"),
        ({"merged": ["m_b000000000000002", "ALICE"]}, 8, "merged_ids"),
        ({"revision_job": "ALICE_JOB"}, 8, "job_id"),
        ({"source_job": "ALICE_JOB"}, 6, "source_job_id"),
        ({"tombstone": {"memory_id": "m_b000000000000009", "source_job_id": "ALICE_JOB"}}, 9, "source_job_id"),
        (
            {
                "tombstone": {
                    "memory_id": "m_b000000000000009",
                    "source_job_id": "j_b000000000000001",
                    "retired_into": "ALICE",
                }
            },
            9,
            "retired_into",
        ),
        ({"tombstone": {"memory_id": "ALICE"}}, 9, "already exists"),
    ],
)
def test_an_import_naming_another_owners_record_is_refused_whole(
    alice: Alice, tmp_path: Path, wrong: dict[str, Any], line: int, names: str
):
    ids = {"ALICE": alice.memory, "ALICE_FORGOTTEN": alice.forgotten, "ALICE_JOB": alice.job}
    wrong = json.loads(re.sub(r"ALICE(_FORGOTTEN|_JOB)?", lambda m: ids[m.group(0)], json.dumps(wrong)))
    path = write_jsonl(tmp_path / "bob.jsonl", bob_records(**wrong))
    named = next(v for v in ids.values() if v in path.read_text(encoding="utf-8"))
    before = dump(alice.db)

    refused(cli("import", str(path), db=alice.db, owner="bob"), f"{path}, line {line}:", names, named)
    assert dump(alice.db) == before  # nothing stored, not even the records before the refused one
    assert ok(cli("history", alice.memory, "--json", db=alice.db, owner="alice")).stdout == alice.history


def test_bobs_own_import_is_accepted_and_stays_out_of_alices_history_and_forget(alice: Alice, tmp_path: Path):
    path = write_jsonl(tmp_path / "bob.jsonl", bob_records())
    ok(cli("import", str(path), db=alice.db, owner="bob"))
    check_passes(alice.db)
    history = json.loads(ok(cli("history", alice.memory, "--json", db=alice.db, owner="alice")).stdout)
    assert history["merged_from"] == [] and [j["job_id"] for j in history["jobs"]] == [alice.job]

    ok(cli("forget", alice.memory, db=alice.db, owner="alice"))
    for memory, status in (("m_b000000000000001", "live"), ("m_b000000000000002", "retired")):
        kept = json.loads(ok(cli("history", memory, "--json", db=alice.db, owner="bob")).stdout)
        assert kept["status"] == status and kept["body"].startswith("Bob parks on level")
    check_passes(alice.db)


def test_a_refusal_after_many_good_records_stores_none_of_them(alice: Alice, tmp_path: Path):
    t = 1.8e9
    records = bob_records()
    jobs = [
        {
            "type": "job",
            "id": f"j_c{n:015x}",
            "owner": "bob",
            "namespace": "default",
            "text": f"Fact {n}",
            "status": "queued",
            "created_at": t + n,
            "updated_at": t + n,
        }
        for n in range(600)
    ]
    records[5:5] = jobs  # well past any batch size, before the memories
    records.append(
        {
            "type": "memory",
            "id": "m_c000000000000001",
            "owner": "bob",
            "namespace": "default",
            "body": "Bob's spare key is under the mat",
            "status": "retired",
            "retired_into": alice.memory,
            "source_job_id": "j_c000000000000000",
            "created_at": t,
            "updated_at": t,
        }
    )
    path = write_jsonl(tmp_path / "bob.jsonl", records)
    before = dump(alice.db)
    refused(
        cli("import", str(path), db=alice.db, owner="bob"),
        f"line {len(records)}:",
        alice.memory,
        "nothing was imported",
    )
    assert dump(alice.db) == before


# --- D8: a round trip of every kind of record ------------------------------------------------------

STAGING = "Staging API lives at https://staging.example.com/api on version 2.4.1"
STAGING_PROPOSAL = "Staging API is at https://staging.example.com/api, now version 2.5.0"
STAGING_MERGED = "Staging API lives at https://staging.example.com/api, version 2.5.0 (previously 2.4.1)."
BUILD = "The build server ci.example.com runs Jenkins 2.401"
BUILD_PROPOSAL = "The build server ci.example.com now runs Jenkins 2.440"
BUILD_MERGED = "The build server ci.example.com runs Jenkins 2.440 (previously 2.401)."
PEANUTS = ["The user is allergic to peanuts", "User has a peanut allergy"]
PEANUT_PROPOSAL = "The user has an allergy to peanuts"
PEANUT_MERGED = "The user is allergic to peanuts (a peanut allergy)."
TEA = ["The user likes green tea in the afternoon", "User enjoys drinking green tea in the afternoon"]
TEA_PROPOSAL = "The user loves green tea in the afternoon"
TEA_MERGED = "The user likes, loves and enjoys drinking green tea in the afternoon."
SECRET = "The vault recovery phrase is kept in the grey Zyxwvut cabinet"
OTHER = [
    "Deploys go out on Fridays from us-east-1",
    "Code review needs two approvals before merging to main",
    "The family dog is called Miso",
    "The wifi router is in the hallway closet",
]


def _script(request: dict[str, Any]) -> Reply:
    """UPDATE the staging and build facts, CONSOLIDATE the peanut and tea pairs, CREATE the rest."""
    content = request["messages"][1]["content"]
    proposal = content.split("CANDIDATES:")[0]
    shown = dict(re.findall(r"^\[(C\d+)\][^\n]*\n<<<\n(.*?)\n>>>", content, re.M | re.S))
    for wanted, bodies, merged, decision in (
        (STAGING_PROPOSAL, [STAGING], STAGING_MERGED, "UPDATE"),
        (BUILD_PROPOSAL, [BUILD], BUILD_MERGED, "UPDATE"),
        (PEANUT_PROPOSAL, PEANUTS, PEANUT_MERGED, "CONSOLIDATE"),
        (TEA_PROPOSAL, TEA, TEA_MERGED, "CONSOLIDATE"),
    ):
        if wanted in proposal:
            labels = [label for label, body in shown.items() if body in bodies]
            assert labels, (wanted, shown)
            return Reply(f"{decision} {' '.join(labels)}\n---\n{merged}")
    return Reply("CREATE")


@dataclass(frozen=True)
class Everything:
    db: Path
    ids: dict[str, list[str]]  # owner -> every memory id, whatever its status
    forgotten: list[str]


@pytest.fixture(scope="module")
async def everything(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedEmbedder) -> Everything:
    """Live memories with occurrences, an UPDATE, a CONSOLIDATE (a retired memory), a CONSOLIDATE
    undone (the retired memory back), a forgotten memory with an occurrence, a forgotten memory
    that had a revision, a forgotten CONSOLIDATE target (its retired memory forgotten with it),
    and a second owner."""
    folder = tmp_path_factory.mktemp("everything")
    db = folder / "source.db"
    with isolated(folder):  # module scope: isolated as conftest isolates each test
        with ScriptedLLM(_script) as llm:
            settings = load_settings(
                db_path=db,
                llm={"base_url": llm.base_url, "model": "scripted", "timeout_s": 5},
                curation={"nominator_threshold": 0.5},
            )
            svc = MemoryService(settings, embedder=embedder)
            async with svc.running():

                async def remember(text: str, namespace: str = "work", owner: str = "local", **kw: Any) -> Any:
                    job = (await svc.remember(owner, text, namespace, wait_ms=20000, **kw)).job
                    assert job.status == "done", job
                    return job

                for text in OTHER:
                    await remember(text)
                assert (await remember(OTHER[0])).decision == "occurrence"
                await remember("Kubernetes clusters were upgraded to 1.30", occurred_at="2026-03-02")
                await remember(STAGING)
                assert (await remember(STAGING_PROPOSAL)).decision == "updated"
                build = await remember(BUILD)
                assert (await remember(BUILD_PROPOSAL)).decision == "updated"
                peanuts = [await remember(text, "home") for text in PEANUTS]
                target = await remember(PEANUT_PROPOSAL, "home")
                assert target.decision == "consolidated"
                tea = [await remember(text, "home") for text in TEA]
                tea_target = await remember(TEA_PROPOSAL, "home")
                assert tea_target.decision == "consolidated"
                assert (await svc.undo("local", tea_target.memory_id)).restored
                secret = await remember(SECRET, "home", idempotency_key="k-vault")
                assert (await remember(SECRET + " ", "home")).decision == "occurrence"
                forgotten = [secret.memory_id, build.memory_id, target.memory_id]
                for memory in forgotten:
                    await svc.forget("local", memory)
                forgotten += [j.memory_id for j in peanuts if j.memory_id != target.memory_id]
                assert [(await svc.history("local", m)).status for m in forgotten] == ["forgotten"] * 4
                assert [(await svc.history("local", j.memory_id)).status for j in tea] == ["live", "live"]
                await remember("Bob's locker code is 4417", owner="bob")
                await remember("Bob's cat is Pixel", "home", owner="bob")

                def all_ids(conn: Any) -> dict[str, list[str]]:
                    found: dict[str, list[str]] = {}
                    for owner, memory in conn.execute("SELECT owner, id FROM memories ORDER BY rowid"):
                        found.setdefault(owner, []).append(memory)
                    return found

                ids = await svc.store.db.read(all_ids)
    return Everything(db, ids, forgotten)


async def histories(db: Path, ids: dict[str, list[str]], embedder: FastEmbedEmbedder) -> dict[str, Any]:
    svc = MemoryService(load_settings(db_path=db), embedder=embedder)
    async with svc.running(worker=False):
        return {m: await svc.history(owner, m) for owner, memories in ids.items() for m in memories}


def contains(folder: Path, stem: str, word: bytes) -> bool:
    return any(word in f.read_bytes() for f in folder.iterdir() if f.name.startswith(stem))


async def test_a_round_trip_of_every_kind_of_record_passes_check_with_the_same_history(
    everything: Everything, embedder: FastEmbedEmbedder, tmp_path: Path
):
    check_passes(everything.db)
    exported = tmp_path / "all.jsonl"
    ok(cli("export", str(exported), "--all-owners", db=everything.db))
    assert b"Zyxwvut" not in exported.read_bytes()

    target = tmp_path / "target.db"
    ok(cli("import", str(exported), "--all-owners", db=target))
    check_passes(target)
    # Through the CLI for the memories whose history is the point: forgotten, retired, revised, restored.
    interesting = [*everything.forgotten, *[m for m in everything.ids["local"] if m not in everything.forgotten][-6:]]
    shown = {}
    for memory in interesting:
        source = ok(cli("history", memory, "--json", db=everything.db)).stdout
        shown[memory] = ok(cli("history", memory, "--json", db=target)).stdout
        assert shown[memory] == source
    for memory in everything.forgotten:
        assert json.loads(shown[memory])["status"] == "forgotten"
    # And every memory of both owners, through the service.
    assert await histories(target, everything.ids, embedder) == await histories(everything.db, everything.ids, embedder)
    assert not contains(tmp_path, "target.db", b"Zyxwvut")

    again = json.loads(ok(cli("import", str(exported), "--all-owners", "--json", db=target)).stdout)
    assert again["added"] == {}
    check_passes(target)


async def test_an_export_written_before_tombstones_carried_their_memory_still_round_trips(
    everything: Everything, tmp_path: Path
):
    exported = tmp_path / "all.jsonl"
    ok(cli("export", str(exported), "--all-owners", db=everything.db))
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    kept = ("type", "memory_id", "owner", "namespace", "jobs", "forgotten_at")
    old = [{k: r[k] for k in kept} if r["type"] == "tombstone" else r for r in lines]
    path = write_jsonl(tmp_path / "old.jsonl", old)

    target = tmp_path / "target.db"
    ok(cli("import", str(path), "--all-owners", db=target))
    check_passes(target)
    for memory in everything.forgotten:
        source = json.loads(ok(cli("history", memory, "--json", db=everything.db)).stdout)
        found = json.loads(ok(cli("history", memory, "--json", db=target)).stdout)
        assert found["status"] == "forgotten" and found["body"] == ""
        # Such a file never said which memory a forgotten one had been folded into; its own jobs it did.
        assert found["jobs"] == [j for j in source["jobs"] if j["memory_id"] == memory]


# --- D19: malformed input and unusable destinations are one-line errors -------------------------------

HEADER = {"type": "header", "format": "memwal-export", "version": 1, "exported_at": 1.8e9, "owners": ["local"]}
LANE = {"type": "lane", "owner": "local", "namespace": "default"}


def job_line(text: str) -> str:
    return json.dumps(
        {
            "type": "job",
            "id": "j_0000000000000001",
            "owner": "local",
            "namespace": "default",
            "text": text,
            "status": "queued",
            "created_at": 1.8e9,
            "updated_at": 1.8e9,
        }
    )


@pytest.mark.parametrize(
    ("name", "content", "args", "expected"),
    [
        ("notes.md", b"- Standup is at 9:30\n- Caf\xe9 on the corner\n", [], ["line 2", "byte 26", "0xe9", "UTF-8"]),
        ("notes.txt", b"\xef\xbb\xbfLunch is at noon\xff\n", [], ["line 1", "byte 19", "0xff"]),
        (
            "memory.json",
            b'{"type":"entity","name":"A","observations":[]}\n{"type":"entity","name":"\xc3"}\n',
            [],
            ["line 2", "byte 72", "0xc3"],
        ),
        (
            "export.jsonl",
            (json.dumps(HEADER) + "\n" + json.dumps(LANE) + "\n" + job_line("caf\u00e9") + "\n")
            .encode()
            .replace(b"\\u00e9", b"\xe9"),
            [],
            ["line 3", "0xe9"],
        ),
        ("binary.bin", b"\x00\x01\x80\x81\xfe", ["--format", "text"], ["line 1", "byte 2", "0x80"]),
        ("deep.jsonl", (json.dumps(HEADER) + "\n" + "[" * 100_000 + "\n").encode(), [], ["line 2", "nested"]),
        (
            "huge.jsonl",
            (json.dumps(HEADER) + "\n" + '{"type":"lane","n":' + "9" * 5000 + "}\n").encode(),
            [],
            ["line 2", "not valid JSON"],
        ),
        (
            "surrogate.jsonl",
            (json.dumps(HEADER) + "\n" + json.dumps(LANE) + "\n" + job_line("half \ud800 a pair") + "\n").encode(),
            [],
            ["line 3", "text", "lone surrogate"],
        ),
        (
            "nan.jsonl",
            (
                json.dumps(HEADER)
                + "\n"
                + json.dumps(LANE)
                + "\n"
                + job_line("fine").replace('1800000000.0, "updated_at', 'NaN, "updated_at')
                + "\n"
            ).encode(),
            [],
            ["line 3", "created_at"],
        ),
    ],
)
def test_a_malformed_import_file_is_a_one_line_error_and_stores_nothing(
    tmp_path: Path, name: str, content: bytes, args: list[str], expected: list[str]
):
    path = tmp_path / name
    path.write_bytes(content)
    db = tmp_path / "memwal.db"
    refused(cli("import", str(path), *args, db=db), str(path), *expected)
    assert sum(len(rows) for table, rows in dump(db).items()) == 0


def test_unusable_export_and_backup_destinations_are_one_line_errors(small_db: Path, tmp_path: Path):
    plain = tmp_path / "plain.txt"
    plain.write_text("a file, not a folder\n", encoding="utf-8")
    refused(cli("export", str(tmp_path), db=small_db), "is a folder")
    refused(cli("export", str(plain / "x.jsonl"), db=small_db), str(plain))
    refused(cli("backup", str(plain / "x.db"), db=small_db), str(plain))
    if Path("/proc").is_dir():  # a folder nothing may be created in, even by root
        refused(cli("export", "/proc/memwal-export.jsonl", db=small_db), "cannot write the export")
        refused(cli("backup", "/proc/memwal-backup.db", db=small_db), "cannot write the backup")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(MEMWAL), "export", "-"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
            | {"MEMWAL_DB_PATH": str(small_db), "MEMWAL_EMBEDDING__MODEL": "none"},
            timeout=120,
        )
    refused(done, "cannot write the export to stdout")
    assert plain.read_text(encoding="utf-8") == "a file, not a folder\n"
    check_passes(small_db)


# --- D7b: imported texts pass the rules of a remember -----------------------------------------


def _done_job(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "job",
        "id": "j_0000000000000002",
        "owner": "local",
        "namespace": "default",
        "text": text,
        "status": "done",
        "decision": "created",
        "memory_id": "m_0000000000000002",
        "created_at": 1.8e9,
        "updated_at": 1.8e9,
        **fields,
    }


def _memory(body: str) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": "m_0000000000000002",
        "owner": "local",
        "namespace": "default",
        "body": body,
        "status": "live",
        "source_job_id": "j_0000000000000002",
        "created_at": 1.8e9,
        "updated_at": 1.8e9,
    }


def _revision(body: str) -> dict[str, Any]:
    return {
        "type": "revision",
        "owner": "local",
        "memory_id": "m_0000000000000002",
        "body": body,
        "decision": "updated",
        "created_at": 1.8e9,
    }


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([_done_job("ctl\x00\x1b[31mred"), _memory("fine")], ["line 3", "job text", "U+0000"]),
        ([_done_job("fine"), _memory("ctl\x1b[31mred")], ["line 4", "memory body", "U+001B"]),
        ([_done_job("h" * 200_000), _memory("h")], ["line 3", "job text is 200000 bytes", "65536"]),
        ([_done_job("fine"), _memory("h" * 200_000)], ["line 4", "memory body is 200000 bytes"]),
        ([_done_job("fine"), _memory("fine"), _revision("old\x07body")], ["line 5", "revision body", "U+0007"]),
        ([_done_job(""), _memory("fine")], ["line 3", "job text is empty"]),
        ([_done_job("fine"), _memory("\u200b\u200b")], ["line 4", "memory body has nothing visible"]),
        ([_done_job("fine", idempotency_key="k\x1b"), _memory("fine")], ["line 3", "idempotency_key", "U+001B"]),
    ],
)
def test_an_imported_text_the_remember_tool_would_refuse_is_refused_with_its_line(
    tmp_path: Path, records: list[dict[str, Any]], expected: list[str]
):
    db = tmp_path / "memwal.db"
    ok(cli("remember", "The garage door code is 4417", db=db))
    before = dump(db)
    path = write_jsonl(tmp_path / "crafted.jsonl", [HEADER, LANE, *records])
    refused(cli("import", str(path), db=db), str(path), "nothing was imported", *expected)
    assert dump(db) == before


# --- times an import stores are on the calendar, as a date argument must be ----------------------

FIRST_S = -62135596800.0  # 0001-01-01T00:00:00Z
LAST_S = 253402300799.99997  # the last float that still shows as a time in 9999 (UTC)
TOMBSTONE = {
    "type": "tombstone",
    "memory_id": "m_0000000000000009",
    "owner": "local",
    "namespace": "default",
    "jobs": 0,
    "forgotten_at": 1.8e9,
}


def _every_kind() -> list[dict[str, Any]]:
    """One record of each kind, with the calendar's two ends among their times."""
    return [
        HEADER,
        LANE,
        _done_job("fine", occurred_at=LAST_S),
        {**_memory("fine"), "occurred_at": FIRST_S},
        _revision("an older body"),
        {**TOMBSTONE, "created_at": FIRST_S, "updated_at": LAST_S},
    ]


def test_the_calendars_ends_are_imported_and_shown_as_dates(tmp_path: Path):
    db = tmp_path / "memwal.db"
    ok(cli("import", str(write_jsonl(tmp_path / "ends.jsonl", _every_kind())), db=db))
    (memory,) = json.loads(ok(cli("list", "--json", db=db)).stdout)["memories"]
    assert memory["occurred_at"] == "0001-01-01T00:00:00+00:00"
    (job,) = json.loads(ok(cli("status", "j_0000000000000002", "--json", db=db)).stdout)
    assert job["occurred_at"] == "9999-12-31T23:59:59.999+00:00"  # the last float before year 10000, cut to the ms


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        (1, "exported_at", 1e12),
        (3, "occurred_at", -1e20),
        (3, "created_at", -1e15),
        (3, "updated_at", math.nextafter(LAST_S, math.inf)),
        (4, "occurred_at", 1e12),
        (4, "created_at", math.nextafter(FIRST_S, -math.inf)),
        (4, "updated_at", -1e20),
        (5, "created_at", 1e300),
        (6, "forgotten_at", -1e15),
        (6, "occurred_at", 1e12),
        (6, "created_at", FIRST_S - 1),
        (6, "updated_at", 1e20),
    ],
)
def test_an_imported_time_off_the_calendar_is_refused_with_its_line(
    tmp_path: Path, line: int, field: str, value: float
):
    """Every time field of every record kind: a time that no reader could show as a date (list
    and recall printed '@-1e+20') stops the import with its line, and nothing is stored."""
    db = tmp_path / "memwal.db"
    ok(cli("remember", "The garage door code is 4417", db=db))
    before = dump(db)
    records = _every_kind()
    records[line - 1] = {**records[line - 1], field: value}
    path = write_jsonl(tmp_path / "crafted.jsonl", records)
    refused(cli("import", str(path), db=db), str(path), f"line {line}", field, "outside the years 0001 to 9999")
    assert dump(db) == before


def test_an_imported_owner_follows_the_owner_rule(tmp_path: Path):
    db = tmp_path / "memwal.db"
    evil = "e\x1b[31mvil"
    path = write_jsonl(tmp_path / "crafted.jsonl", [{**HEADER, "owners": [evil]}, {**LANE, "owner": evil}])
    refused(cli("import", str(path), "--all-owners", db=db), str(path), "line 1", "U+001B")
    assert sum(len(rows) for rows in dump(db).values()) == 0
