"""The CLI against hostile arguments and destinations, run as a user runs it: the console
script as a subprocess on a real SQLite file in tmp_path (vectors off: nothing here needs them).

- export/backup never replace anything but a regular file, and never create folders;
- an undecodable argument or a closed stdout ends without a traceback;
- one owner rule for every place an owner is accepted; config errors are one line per problem;
- `token revoke` revokes exactly one token, named unambiguously;
- `reindex --batch-size` must be positive.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MEMWAL = Path(sys.executable).parent / "memwal-mcp"


def env_for(db: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    return env | {"MEMWAL_DB_PATH": str(db), "MEMWAL_EMBEDDING__MODEL": "none"} | extra


def cli(*args: str | bytes, db: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], capture_output=True, text=True, env=env_for(db, **extra), timeout=120)


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def refused(done: subprocess.CompletedProcess[str], *fragments: str, lines: int = 1) -> str:
    """A clean refusal: non-zero exit, `lines` lines on stderr naming the problem, no traceback."""
    assert done.returncode != 0, done.stdout
    message = done.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == lines, message
    assert message.startswith("memwal-mcp: "), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memwal.db"
    ok(cli("remember", "The garage door code is 4417", db=path))
    return path


# --- export and backup destinations ------------------------------------------------------


@pytest.mark.parametrize("command", [["export"], ["backup", "--no-check"]])
def test_a_fifo_destination_is_refused_with_or_without_force(db: Path, tmp_path: Path, command: list[str]):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for force in ([], ["--force"]):
        refused(cli(*command, str(fifo), *force, db=db), str(fifo), "FIFO", "not a regular file")
        assert fifo.is_fifo()
    link = tmp_path / "to-fifo"
    link.symlink_to(fifo)
    refused(cli(*command, str(link), "--force", db=db), "FIFO")
    assert fifo.is_fifo() and link.is_symlink()


@pytest.mark.parametrize("command", [["export"], ["backup", "--no-check"]])
def test_a_missing_folder_is_not_created(db: Path, tmp_path: Path, command: list[str]):
    target = tmp_path / "no" / "such" / "x.out"
    refused(cli(*command, str(target), db=db), str(tmp_path / "no" / "such"), "does not exist")
    assert not (tmp_path / "no").exists()


def test_backup_to_dash_is_an_error_and_writes_no_file(db: Path, tmp_path: Path):
    done = subprocess.run([str(MEMWAL), "backup", "-"], capture_output=True, text=True, env=env_for(db),
                          cwd=tmp_path, timeout=120)
    refused(done, "stdout", "'-'")
    assert not (tmp_path / "-").exists()


def test_force_still_replaces_a_regular_file(db: Path, tmp_path: Path):
    target = tmp_path / "old.jsonl"
    target.write_text("old\n", encoding="utf-8")
    ok(cli("export", str(target), "--force", db=db))
    assert '"memwal-export"' in target.read_text(encoding="utf-8").splitlines()[0]


# --- undecodable arguments and a closed stdout ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["token", "create", "--owner", "alice", "--label", b"\xff"], "--label"),
        (["token", "create", "--owner", b"al\xffice"], "--owner"),
        (["token", "hash", b"\xff"], "TOKEN"),
        (["token", "revoke", b"sha256:\xff"], "HASH_PREFIX"),
        (["--owner", b"\xfe", "stats"], "--owner"),
        (["remember", b"caf\xe9"], "TEXT"),
    ],
)
def test_an_argument_that_is_not_utf8_is_a_one_line_error_naming_it(
    db: Path, args: list[str | bytes], name: str
):
    refused(cli(*args, db=db), f"{name} is not valid UTF-8")
    assert "no tokens" in ok(cli("token", "list", db=db)).stdout


@pytest.mark.parametrize(
    "args", [["stats"], ["list"], ["check"], ["doctor"], ["recall", "garage"], ["token", "list"], ["export", "-"]]
)
def test_a_closed_stdout_ends_quietly_with_the_sigpipe_status(db: Path, args: list[str]):
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write fails with EPIPE
    try:
        done = subprocess.run([str(MEMWAL), *args], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env=env_for(db), timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == 141, done.stderr
