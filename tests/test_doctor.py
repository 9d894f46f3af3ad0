"""`memwal-mcp doctor`: every check green on this machine, and each broken part named with its fix.

The CLI runs as a subprocess (the installed console script) with the test
interpreter; the LLM tier talks to a scripted OpenAI-compatible server on
127.0.0.1, or to a port where nothing listens.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memwal_mcp import doctor
from memwal_mcp.config import LLMSettings, load_settings
from memwal_mcp.store.sqlite.connection import connect, sqlite_module
from memwal_mcp.store.sqlite.health import probe_database
from memwal_mcp.store.sqlite.migrations import apply_migrations
from tests.scripted_llm import Reply, ScriptedLLM

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
CHECK_LINE = ("✓", "✗", "!", "-")


Verdict = tuple[int, str, str]  # exit code, stdout, stderr


def _environment(folder: Path, db: bool, extra: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    base |= {"XDG_DATA_HOME": str(folder / "xdg-data"), "XDG_CONFIG_HOME": str(folder / "xdg-config")}
    if db:
        base["MEMWAL_DB_PATH"] = str(folder / "memwal.db")
    return base | extra


@dataclass
class DoctorRuns:
    verdicts: dict[str, tuple[Path, Verdict]]  # run name -> (its folder, its verdict)
    llm_requests: list[dict]  # what the scripted LLM was asked
    empty_model: Path


@pytest.fixture(scope="module")
def doctor_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DoctorRuns]:
    """Every `memwal-mcp doctor` run of this module, once, one after another (each loads the model on all cores)."""
    empty_model = tmp_path_factory.mktemp("model")
    closed = f"http://127.0.0.1:{closed_port()}/v1"
    with ScriptedLLM(lambda request: Reply("SKIP C1")) as llm:
        runs: dict[str, tuple[tuple[str, ...], bool, dict[str, str]]] = {
            "default": ((), True, {}),
            "empty model folder": (
                (),
                True,
                {"MEMWAL_EMBEDDING__MODEL": "BAAI/bge-small-en-v1.5", "MEMWAL_EMBEDDING__MODEL_PATH": str(empty_model)},
            ),
            "scripted llm": ((), True, {"MEMWAL_LLM__BASE_URL": llm.base_url, "MEMWAL_LLM__MODEL": "scripted-7b"}),
            "closed port": (("--json",), True, {"MEMWAL_LLM__BASE_URL": closed, "MEMWAL_LLM__MODEL": "llama3"}),
        }
        verdicts = {}
        for name, (args, db, extra) in runs.items():
            folder = tmp_path_factory.mktemp("doctor")
            done = subprocess.run(
                [str(MEMWAL), "doctor", *args],
                capture_output=True,
                text=True,
                env=_environment(folder, db, extra),
                timeout=120,
            )
            verdicts[name] = (folder, (done.returncode, done.stdout, done.stderr))
        yield DoctorRuns(verdicts, llm.requests, empty_model)


def check_lines(stdout: str) -> dict[str, str]:
    """Check name -> its line (and its fix line, if any), from doctor's text output."""
    found: dict[str, str] = {}
    name = None
    for line in stdout.splitlines():
        if line[:1] in CHECK_LINE and line[1:2] == " ":
            name = next(n for n in NAMES if line[2:].startswith(n + " "))
            found[name] = line
        elif name and line.strip().startswith("fix: "):
            found[name] += "\n" + line.strip()
        else:
            name = None
    return found


NAMES = sorted(
    [
        "python",
        "sqlite",
        "sqlite-vec",
        "fts5",
        "model files",
        "embedding",
        "database",
        "permissions",
        "migrations",
        "integrity",
        "lane files",
        "llm",
        "llm endpoint",
        "llm decision",
        "client command",
    ],
    key=len,
    reverse=True,
)


def json_blocks(stdout: str) -> list[dict]:
    """The client configurations: JSON objects printed from column 0 ('{' ... '}')."""
    blocks, current = [], None
    for line in stdout.splitlines():
        if line == "{":
            current = [line]
        elif current is not None:
            current.append(line)
            if line == "}":
                blocks.append(json.loads("\n".join(current)))
                current = None
    return blocks


def uses_stdlib_sqlite() -> bool:
    return sqlite_module() is sqlite3


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_doctor_on_this_machine_is_all_green_and_prints_client_json(doctor_runs):
    tmp_path, (code, stdout, stderr) = doctor_runs.verdicts["default"]
    assert code == 0, stdout + stderr
    lines = check_lines(stdout)
    assert set(lines) == {
        "python",
        "sqlite",
        "sqlite-vec",
        "fts5",
        "model files",
        "embedding",
        "database",
        "permissions",
        "migrations",
        "integrity",
        "lane files",
        "llm",
        "client command",
    }, stdout
    assert "no lane has a sidecar file" in lines["lane files"]
    assert all(line.startswith("✓ ") for name, line in lines.items() if name != "llm"), stdout
    assert lines["llm"].startswith("- llm ") and "not configured" in lines["llm"]
    if uses_stdlib_sqlite():
        assert "using the interpreter's sqlite3" in lines["sqlite"]
    else:  # this machine's default python3: the sqlean fallback, with both versions named
        assert "the interpreter's sqlite3 (SQLite 3." in lines["sqlite"]
        assert "using the sqlean fallback (sqlean-py 3." in lines["sqlite"] and "SQLite 3." in lines["sqlite"]
    assert "sha256 verified" in lines["model files"]
    assert "384 dimensions" in lines["embedding"]
    assert "created just now" in lines["database"]
    assert stdout.rstrip().splitlines()[-1].startswith("doctor: ")

    blocks = json_blocks(stdout)
    assert len(blocks) == 3
    claude, cursor, vscode = blocks
    server = claude["mcpServers"]["memwal"]
    assert cursor["mcpServers"]["memwal"] == server
    assert vscode["servers"]["memwal"] == {"type": "stdio", **server}
    assert server["command"] == str(MEMWAL) and server["args"] == []
    assert Path(server["command"]).is_file() and os.access(server["command"], os.X_OK)
    assert server["env"] == {"MEMWAL_DB_PATH": str(tmp_path / "memwal.db")}  # not the default path


async def test_a_default_database_path_needs_no_env_in_the_client_config(tmp_path: Path):
    report = await doctor.run_doctor(load_settings())
    assert not report.failed, report.checks
    statuses = {check.name: check.status for check in report.checks}
    assert statuses.pop("llm") == statuses.pop("permissions") == "skip", report.checks  # no file yet: nothing to check
    assert set(statuses.values()) == {"ok"} and "integrity" not in statuses, report.checks
    sqlite_data = next(c.data for c in report.checks if c.name == "sqlite")
    assert sqlite_data["module"] == ("sqlite3" if uses_stdlib_sqlite() else "sqlean")
    database = next(c for c in report.checks if c.name == "database")
    assert database.data["path"] == str(tmp_path / "xdg-data" / "memwal-mcp" / "memwal.db")
    assert "will be created" in database.detail  # and doctor did not create it
    assert not (tmp_path / "xdg-data" / "memwal-mcp" / "memwal.db").exists()
    for snippet in report.clients:
        assert all("env" not in server for server in _servers(snippet.config))


@pytest.mark.slow
def test_an_empty_model_folder_is_named_with_a_fix(doctor_runs):
    _, (code, stdout, stderr) = doctor_runs.verdicts["empty model folder"]
    empty = doctor_runs.empty_model
    assert code == 1, stdout + stderr
    lines = check_lines(stdout)
    model = lines["model files"]
    assert model.startswith("✗ model files") and "model_optimized.onnx" in model and "empty" in model
    assert "fix: " in model and "MEMWAL_EMBEDDING__MODEL_PATH" in model and str(empty) in model
    assert lines["embedding"].startswith("- embedding")
    assert "FAILED" in stdout.splitlines()[-1]


@pytest.mark.slow
def test_a_scripted_llm_gets_the_test_decision(doctor_runs):
    _, (code, stdout, stderr) = doctor_runs.verdicts["scripted llm"]
    requests = doctor_runs.llm_requests
    assert code == 0, stdout + stderr
    lines = check_lines(stdout)
    assert lines["llm endpoint"].startswith("✓ llm endpoint") and "reachable" in lines["llm endpoint"]
    assert lines["llm decision"].startswith("✓ llm decision")
    assert "model 'scripted-7b' answered SKIP C1" in lines["llm decision"]
    assert len(requests) == 1 and requests[0]["model"] == "scripted-7b"
    asked = requests[0]["messages"][1]["content"]
    assert doctor.TEST_PROPOSAL in asked and doctor.TEST_NOMINEE in asked and "[C1]" in asked


@pytest.mark.slow
def test_an_llm_on_a_closed_port_is_unreachable_with_a_fix(doctor_runs):
    _, (code, stdout, stderr) = doctor_runs.verdicts["closed port"]
    assert code == 1, stdout + stderr
    report = json.loads(stdout)
    checks = {check["name"]: check for check in report["checks"]}
    assert report["ok"] is False and checks["llm endpoint"]["status"] == "fail"
    assert re.search(r"http://127\.0\.0\.1:\d+/v1 is unreachable: cannot connect", checks["llm endpoint"]["detail"])
    assert "MEMWAL_LLM__BASE_URL" in checks["llm endpoint"]["fix"]
    assert checks["llm decision"]["status"] == "skip"
    assert [name for name, check in checks.items() if check["status"] == "fail"] == ["llm endpoint"]


# --- single checks, in-process ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply("Hmm, these look related."), "no usable decision"),
        (Reply(status=500), "InternalServerError"),
    ],
    ids=["garbage", "http-500"],
)
async def test_an_llm_that_gives_no_decision_fails_with_the_reason(reply: Reply, reason: str):
    with ScriptedLLM(lambda request: reply) as llm:
        check = await doctor.check_llm_decision(LLMSettings(base_url=llm.base_url, model="m", timeout_s=5))
    assert check.status == "fail" and reason in check.detail, check
    assert check.fix and "MEMWAL_LLM__MODEL" in check.fix


async def test_a_merged_body_is_shown():
    with ScriptedLLM(lambda request: Reply("UPDATE C1\n---\nThe user's editor is Vim")) as llm:
        check = await doctor.check_llm_decision(LLMSettings(base_url=llm.base_url, model="m"))
    assert check.status == "ok" and "UPDATE C1" in check.detail and "The user's editor is Vim" in check.detail


def test_half_configured_llm_names_the_missing_setting():
    only_url = doctor.llm_configuration(LLMSettings(base_url="http://localhost:11434/v1"))
    only_model = doctor.llm_configuration(LLMSettings(model="llama3"))
    assert only_url is not None and only_url.status == "fail" and "MEMWAL_LLM__MODEL" in (only_url.fix or "")
    assert only_model is not None and only_model.status == "fail" and "MEMWAL_LLM__BASE_URL" in (only_model.fix or "")


def test_integrity_damage_fails_the_doctor(tmp_path: Path):
    conn = connect(tmp_path / "memwal.db")
    try:
        apply_migrations(conn)
        conn.execute("INSERT INTO lanes (id, owner, namespace) VALUES (1, 'local', 'default')")
        conn.execute(
            "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, status, decision, memory_id,"
            " created_at, updated_at) VALUES ('j_1', 'local', 'default', 1, 'x', 'done', 'created', 'm_gone',"
            " 0, 0)"
        )
    finally:
        conn.close()
    database = probe_database(tmp_path / "memwal.db")
    assert database is not None and database.schema is not None and database.integrity is not None
    check = doctor.check_integrity(database.integrity)
    migrations = doctor.check_migrations(database.schema)
    assert check.status == "fail" and "job_memory_missing" in check.detail and "memwal-mcp check" in (check.fix or "")
    assert migrations.status == "ok"


def test_a_missing_database_will_be_created(tmp_path: Path):
    check = doctor.check_database(tmp_path / "new" / "memwal.db")
    assert check.status == "ok" and "will be created" in check.detail
    assert doctor.check_permissions(tmp_path / "new" / "memwal.db").status == "skip"
    folder = doctor.check_database(tmp_path)
    assert folder.status == "fail" and "MEMWAL_DB_PATH" in (folder.fix or "")


def _servers(config: dict) -> list[dict]:
    return list((config.get("mcpServers") or config["servers"]).values())


def test_client_snippets_carry_the_database_only_when_it_is_not_the_default(tmp_path: Path):
    default = doctor.client_snippets(load_settings())
    custom = doctor.client_snippets(load_settings(db_path=tmp_path / "elsewhere.db"))
    assert all("env" not in server for s in default for server in _servers(s.config))
    assert all(str(tmp_path / "elsewhere.db") in json.dumps(s.config) for s in custom)
    assert [s.file for s in custom][1:] == ["~/.cursor/mcp.json", ".vscode/mcp.json"]
