"""`memwal-mcp export`, `import` and `backup` as a user runs them: the console script as a
subprocess on real SQLite files.

- an export never writes onto the database (or its -wal/-shm, however the path is spelled)
  and never over a file without --force;
- a malformed input file, or an unusable destination, is a one-line error, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memwal_mcp.store.connection import connect

MEMWAL = Path(sys.executable).parent / "memwal-mcp"

# Tables an import writes to (the rest are indexes, counters and settings).
STORED = ("lanes", "remember_jobs", "memories", "memory_revisions", "forgotten", "owner_text_stats")


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
    spellings = [small_db, Path(f"{small_db}-wal"), Path(f"{small_db}-shm"), link, hard,
                 tmp_path / "sub" / ".." / small_db.name]
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

    fresh = tmp_path / "deeper" / "fresh.jsonl"  # a missing folder is made, as for a backup
    ok(cli("export", str(fresh), db=small_db))
    assert fresh.read_text(encoding="utf-8").splitlines()[1:] == lines[1:]


# --- D19: malformed input and unusable destinations are one-line errors -------------------------------

HEADER = {"type": "header", "format": "memwal-export", "version": 1, "exported_at": 1.8e9, "owners": ["local"]}
LANE = {"type": "lane", "owner": "local", "namespace": "default"}


def job_line(text: str) -> str:
    return json.dumps({"type": "job", "id": "j_0000000000000001", "owner": "local", "namespace": "default",
                       "text": text, "status": "queued", "created_at": 1.8e9, "updated_at": 1.8e9})


@pytest.mark.parametrize(
    ("name", "content", "args", "expected"),
    [
        ("notes.md", b"- Standup is at 9:30\n- Caf\xe9 on the corner\n", [], ["line 2", "byte 26", "0xe9", "UTF-8"]),
        ("notes.txt", b"\xef\xbb\xbfLunch is at noon\xff\n", [], ["line 1", "byte 19", "0xff"]),
        ("memory.json", b'{"type":"entity","name":"A","observations":[]}\n{"type":"entity","name":"\xc3"}\n', [],
         ["line 2", "byte 72", "0xc3"]),
        ("export.jsonl", (json.dumps(HEADER) + "\n" + json.dumps(LANE) + "\n" + job_line("caf\u00e9") + "\n")
         .encode().replace(b"\\u00e9", b"\xe9"), [], ["line 3", "0xe9"]),
        ("binary.bin", b"\x00\x01\x80\x81\xfe", ["--format", "text"], ["line 1", "byte 2", "0x80"]),
        ("deep.jsonl", (json.dumps(HEADER) + "\n" + "[" * 100_000 + "\n").encode(), [], ["line 2", "nested"]),
        ("huge.jsonl", (json.dumps(HEADER) + "\n" + '{"type":"lane","n":' + "9" * 5000 + "}\n").encode(), [],
         ["line 2", "not valid JSON"]),
        ("surrogate.jsonl", (json.dumps(HEADER) + "\n" + json.dumps(LANE) + "\n" + job_line("half \ud800 a pair")
                             + "\n").encode(), [], ["line 3", "text", "lone surrogate"]),
        ("nan.jsonl", (json.dumps(HEADER) + "\n" + json.dumps(LANE) + "\n"
                       + job_line("fine").replace("1800000000.0, \"updated_at", "NaN, \"updated_at") + "\n").encode(),
         [], ["line 3", "created_at"]),
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
        done = subprocess.run([str(MEMWAL), "export", "-"], stdout=full, stderr=subprocess.PIPE, text=True,
                              env={k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
                              | {"MEMWAL_DB_PATH": str(small_db), "MEMWAL_EMBEDDING__MODEL": "none"}, timeout=120)
    refused(done, "cannot write the export to stdout")
    assert plain.read_text(encoding="utf-8") == "a file, not a folder\n"
    check_passes(small_db)
