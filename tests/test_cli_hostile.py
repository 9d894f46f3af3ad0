"""The CLI against hostile arguments and destinations, run as a user runs it: the console
script as a subprocess on a real SQLite file in tmp_path (vectors off: nothing here needs them).

- export/backup never replace anything but a regular file, and never create folders;
- an undecodable argument or a closed stdout ends without a traceback;
- one owner rule for every place an owner is accepted; config errors are one line per problem;
- `token revoke` revokes exactly one token, named unambiguously;
- `reindex --batch-size` must be positive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memwal_mcp.store.sqlite.connection import connect
from tests.databases import copy_closed_sqlite
from tests.environment import isolated

pytestmark = pytest.mark.slow

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


@pytest.fixture(scope="module")
def made_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one memory, made once through the CLI for the module's tests."""
    folder = tmp_path_factory.mktemp("made")
    path = folder / "memwal.db"
    with isolated(folder):  # module scope: isolated as conftest isolates each test
        ok(cli("remember", "The garage door code is 4417", db=path))
    return path


@pytest.fixture
def db(made_db: Path, tmp_path: Path) -> Path:
    """A copy of that store of this test's own."""
    return copy_closed_sqlite(made_db, tmp_path)


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
    done = subprocess.run(
        [str(MEMWAL), "backup", "-"], capture_output=True, text=True, env=env_for(db), cwd=tmp_path, timeout=120
    )
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
def test_an_argument_that_is_not_utf8_is_a_one_line_error_naming_it(db: Path, args: list[str | bytes], name: str):
    refused(cli(*args, db=db), f"{name} is not valid UTF-8")
    assert "no tokens" in ok(cli("token", "list", db=db)).stdout


@pytest.mark.parametrize(
    "args", [["stats"], ["list"], ["check"], ["doctor"], ["recall", "garage"], ["token", "list"], ["export", "-"]]
)
def test_a_closed_stdout_ends_quietly_with_the_sigpipe_status(db: Path, args: list[str]):
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write fails with EPIPE
    try:
        done = subprocess.run(
            [str(MEMWAL), *args], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env_for(db), timeout=120
        )
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == 141, done.stderr


# --- one owner rule; config errors one line per problem --------------------------------------


@pytest.mark.parametrize(
    ("owner", "fragment"),
    [("", "empty"), ("e\x1b[31mvil", "U+001B"), ("two\nlines", "U+000A"), ("x" * 5000, "5000 characters")],
)
def test_token_create_refuses_an_owner_the_rest_of_the_cli_refuses(db: Path, owner: str, fragment: str):
    refused(cli("token", "create", "--owner", owner, db=db), "--owner", fragment)
    refused(cli("--owner", owner, "stats", db=db), "configuration error: owner", fragment)
    refused(cli("stats", db=db, MEMWAL_OWNER=owner), "configuration error: owner", fragment)
    refused(
        cli("stats", db=db, MEMWAL_AUTH__TOKENS=json.dumps([{"hash": "sha256:" + "0" * 64, "owner": owner}])),
        "configuration error: auth.tokens.0.owner",
        fragment,
    )
    assert ok(cli("token", "list", db=db)).stdout.strip() == "no tokens"


def test_token_list_never_prints_control_characters_raw(db: Path):
    ok(cli("token", "create", "--owner", "alice", "--label", "laptop", db=db))
    conn = connect(db)  # a row written before the owner rule existed
    try:
        with conn:
            conn.execute("UPDATE api_tokens SET owner = ?, label = ?", ("e\x1b[31mvil\nx", "bell\x07"))
    finally:
        conn.close()
    listing = ok(cli("token", "list", db=db)).stdout
    assert "\x1b" not in listing and "\x07" not in listing and len(listing.strip().splitlines()) == 1, listing
    assert "e\\x1b[31mvil\\x0ax" in listing and "bell\\x07" in listing


def test_config_errors_are_one_line_per_problem_naming_the_key(db: Path, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[recall]\ndefault_limit = 0\n[server]\nport = "x"\n', encoding="utf-8")
    message = refused(cli("--config", str(bad), "stats", db=db), lines=2)
    first, second = message.splitlines()
    assert first.startswith("memwal-mcp: configuration error: recall.default_limit: ") and "(got 0)" in first
    assert second.startswith("memwal-mcp: configuration error: server.port: ") and "(got 'x')" in second
    refused(cli("stats", db=db, MEMWAL_AUTH__TOKENS='[{"hash": "sha256:00"}]'), "auth.tokens.0.owner", "required")
    refused(cli("stats", db=db, MEMWAL_AUTH__TOKENS="not json"), "MEMWAL_AUTH__", "not valid JSON")
    broken = tmp_path / "broken.toml"
    broken.write_text("owner = [\n", encoding="utf-8")
    refused(cli("--config", str(broken), "stats", db=db), str(broken), "not valid TOML")


# --- token revoke names exactly one token ------------------------------------------------


def _hashes(db: Path) -> dict[str, str | None]:
    rows = json.loads(ok(cli("token", "list", "--json", db=db)).stdout)
    return {row["hash"]: row["revoked_at"] for row in rows}


def test_token_revoke_needs_a_prefix_that_names_one_token(db: Path):
    for owner in ("a", "b", "c"):
        ok(cli("token", "create", "--owner", owner, db=db))
    hashes = sorted(_hashes(db))
    for short in ("s", "sha256:", "sha256:abc", "nothex!!"):
        refused(cli("token", "revoke", short, db=db), "at least 8 hex digits")
    assert all(revoked is None for revoked in _hashes(db).values())

    refused(cli("token", "revoke", "sha256:" + "0" * 63 + "x", db=db), "not hex")
    missing = "sha256:" + ("0" * 8 if not any(h.startswith("sha256:00000000") for h in hashes) else "f" * 8)
    refused(cli("token", "revoke", missing, db=db), "no active token")

    conn = connect(db)  # two tokens sharing a long prefix, as chance will one day make them
    try:
        with conn:
            conn.execute("UPDATE api_tokens SET hash = ? WHERE hash = ?", ("sha256:12345678aa" + "0" * 54, hashes[0]))
            conn.execute("UPDATE api_tokens SET hash = ? WHERE hash = ?", ("sha256:12345678bb" + "0" * 54, hashes[1]))
    finally:
        conn.close()
    refused(cli("token", "revoke", "sha256:12345678", db=db), "2 active tokens", "nothing was revoked")
    assert all(revoked is None for revoked in _hashes(db).values())

    done = ok(cli("token", "revoke", "12345678AA", db=db))
    assert done.stdout.strip() == "revoked sha256:12345678aa" + "0" * 54
    states = _hashes(db)
    assert states["sha256:12345678aa" + "0" * 54] is not None
    assert sorted(h for h, revoked in states.items() if revoked is None) == sorted(
        ["sha256:12345678bb" + "0" * 54, hashes[2]]
    )


# --- reindex --batch-size ----------------------------------------------------------------


def test_reindex_refuses_a_batch_size_below_one(db: Path):
    real_model = {"MEMWAL_EMBEDDING__MODEL": "memwal/all-MiniLM-L6-v2-int8"}  # the bundled one, no network
    for size in ("0", "-1"):
        refused(cli("reindex", "--batch-size", size, db=db, **real_model), "--batch-size", "from 1", f"got {size}")
    done = ok(cli("reindex", "--batch-size", "2", db=db, **real_model))
    assert done.stdout.strip() == "re-embedded 1 memory with memwal/all-MiniLM-L6-v2-int8", done.stdout
