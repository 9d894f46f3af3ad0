"""The CLI as a shell sees it, against the MCP tools: `memwal-mcp` run as a subprocess, the real
MCP client for the tool side. A replayed key says so in both; a refused command line is one line
on stderr naming the option and value; exit statuses follow one rule (README, "Exit status")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]


def _ctrl_c_as_at_a_terminal() -> None:
    """A child started from a background job (`pytest ... &`, nohup) inherits SIGINT ignored, and
    an ignored Ctrl-C tests nothing: give it the default disposition a terminal's command has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _analyze_interrupted(env: dict[str, str], cwd: Path, after_asked_s: float, wait_s: float) -> tuple[int, str, str]:
    """`analyze -` extracting through a scripted LLM that holds its reply, Ctrl-C'd once the
    command waits on it (and `after_asked_s` later): (status, stdout, stderr)."""
    asked, release = threading.Event(), threading.Event()

    def script(request: dict[str, Any]) -> Reply:
        asked.set()
        release.wait(60)  # the command is now inside its await on the LLM, where Ctrl-C lands
        return Reply(json.dumps({"facts": ["Erin owns the budget"]}))

    with ScriptedLLM(script) as llm:
        llm_env = {"MEMWAL_LLM__BASE_URL": llm.base_url, "MEMWAL_LLM__MODEL": "scripted", "MEMWAL_LLM__TIMEOUT_S": "60"}
        proc = subprocess.Popen(
            [str(MEMWAL), "analyze", "-"],
            env={**os.environ, **env, **llm_env},
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_ctrl_c_as_at_a_terminal,
        )
        try:
            assert proc.stdin is not None
            proc.stdin.write("Erin: I own the budget now.")
            proc.stdin.close()
            assert asked.wait(90), "the command never asked the LLM"
            time.sleep(after_asked_s)
            proc.send_signal(signal.SIGINT)
            status = proc.wait(timeout=wait_s)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return status, proc.stdout.read() if proc.stdout else "", proc.stderr.read() if proc.stderr else ""


def _cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MEMWAL), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=90, check=False
    )


async def test_a_replayed_key_says_so_in_the_cli_as_in_the_tool(server_env, db, tmp_path):
    env = server_env()
    first = _cli(env, "remember", "The release train leaves on Thursdays", "--key", "k-7", cwd=tmp_path)
    again = _cli(env, "remember", "The release train leaves on Thursdays", "--key", "k-7", cwd=tmp_path)
    as_json = _cli(env, "remember", "The release train leaves on Thursdays", "--key", "k-7", "--json", cwd=tmp_path)
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            tool = await session.call_tool(
                "memwal_remember", {"text": "The release train leaves on Thursdays", "idempotency_key": "k-7"}
            )
    assert [done.returncode for done in (first, again, as_json)] == [0, 0, 0], again.stderr
    assert first.stdout.startswith("Remembered: j_"), first.stdout
    job = first.stdout.removeprefix("Remembered: ").split(":")[0]
    assert again.stdout.startswith(f"Already remembered (same idempotency key): {job}: done"), again.stdout
    assert again.stdout.rstrip("\n") == tool_text(tool)  # the same words from the CLI and the tool
    replay = json.loads(as_json.stdout)
    assert (replay["job_id"], replay["replayed"]) == (job, True)
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 1


# (arguments, exit status, what stderr says: all of it, one line)
REFUSED: list[tuple[list[str], int, str]] = [
    (
        ["recall", "coffee", "--max-chars", "abc"],
        2,
        "memwal-mcp recall: error: --max-chars must be an integer, got 'abc' (see memwal-mcp recall --help)",
    ),
    (
        ["recall", "coffee", "--min-score", "high"],
        2,
        "memwal-mcp recall: error: --min-score must be a number, got 'high' (see memwal-mcp recall --help)",
    ),
    (
        ["recall"],
        2,
        "memwal-mcp recall: error: the following arguments are required: query (see memwal-mcp recall --help)",
    ),
    # A word a command does not know points at that command's help, not the top one.
    (["list", "--colour"], 2, "memwal-mcp list: error: unrecognized arguments: --colour (see memwal-mcp list --help)"),
    (["--colour"], 2, "memwal-mcp: error: unrecognized arguments: --colour (see memwal-mcp --help)"),
    (
        ["list", "--include-superseded", "yes"],
        2,
        "memwal-mcp list: error: argument --include-superseded: invalid choice: 'yes' (choose from 'only') "
        "(see memwal-mcp list --help)",
    ),
    (
        ["recall", "coffee", "--max-chars", "0"],
        2,
        "memwal-mcp: error: --max-chars must be an integer from 1 to 1000000, got 0",
    ),
    (["forget"], 2, "memwal-mcp: error: say what to forget: a memory id, or --query with the words to find it by"),
    (["purge"], 2, "memwal-mcp: error: say what to purge: --expired"),
    (["history", "m_0123456789abcdef"], 1, "memwal-mcp: error: no memory with id 'm_0123456789abcdef'"),
    (["undo", "m_0123456789abcdef"], 1, "memwal-mcp: error: no memory with id 'm_0123456789abcdef'"),
    (["status", "j_0123456789abcdef"], 1, "memwal-mcp: error: no job with id 'j_0123456789abcdef'"),
]


def test_refusals_are_one_line_with_one_rule_for_exit_statuses(server_env, db, tmp_path):
    env = server_env()
    seeded = _cli(env, "remember", "The office opens at 8", cwd=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    said = [(args, _cli(env, *args, cwd=tmp_path)) for args, _, _ in REFUSED]
    assert [(args, done.returncode, done.stderr) for args, done in said] == [
        (args, status, line + "\n") for args, status, line in REFUSED
    ]
    assert all(done.stdout == "" for _, done in said)
    # Done is 0: a command that found nothing, too.
    found_nothing = _cli(env, "recall", "quantum chromodynamics lattice", "--min-score", "0.99", cwd=tmp_path)
    checked = _cli(env, "check", cwd=tmp_path)
    assert (found_nothing.returncode, checked.returncode) == (0, 0), found_nothing.stderr + checked.stdout


async def test_the_cli_list_takes_only_as_the_tool_does(server_env, tmp_path):
    """`list --include-superseded only` / `--include-expired only` list what memwal_list lists with "only"."""
    env = server_env()
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            old = await session.call_tool("memwal_remember", {"text": "The gate code is 1234", "wait_ms": 20000})
            a = old.structured_content["memory_id"]
            await session.call_tool(
                "memwal_remember", {"text": "The gate code is 5678", "supersedes": [a], "wait_ms": 20000}
            )
            ended = await session.call_tool(
                "memwal_remember", {"text": "The pool closes at 6", "expires_at": "2020-01-31", "wait_ms": 20000}
            )
            c = ended.structured_content["memory_id"]
            tool = {
                flag: [
                    m["id"]
                    for m in (await session.call_tool("memwal_list", {flag: "only"})).structured_content["memories"]
                ]
                for flag in ("include_superseded", "include_expired")
            }
    assert tool == {"include_superseded": [a], "include_expired": [c]}
    for flag, ids in tool.items():
        for spelled in ([f"--{flag.replace('_', '-')}", "only"], [f"--{flag.replace('_', '-')}=only"]):
            done = _cli(env, "list", *spelled, "--json", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            assert [m["id"] for m in json.loads(done.stdout)["memories"]] == ids, (spelled, done.stdout)
    both = _cli(env, "list", "--include-superseded", "--include-expired", "--json", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert {a, c} <= {m["id"] for m in json.loads(both.stdout)["memories"]}


@pytest.mark.sqlite_only
def test_ctrl_c_stops_the_stdio_server_while_its_client_keeps_stdin_open(server_env, db, tmp_path):
    """A Ctrl-C to the server of a client that still holds stdin open: the reader of stdin is
    blocked in its read; the exit used to wait for it forever (the replies already sent were
    complete). It must end promptly, with status 0 (Ctrl-C is how a server is stopped)."""

    def line(payload: dict[str, Any]) -> bytes:
        return (json.dumps({"jsonrpc": "2.0", **payload}) + "\n").encode()

    proc = subprocess.Popen(
        [str(MEMWAL)],
        env={**os.environ, **server_env()},
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=_ctrl_c_as_at_a_terminal,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        proc.stdin.write(line({"id": 1, "method": "initialize", "params": hello}))
        proc.stdin.write(line({"method": "notifications/initialized"}))
        proc.stdin.write(
            line({"id": 2, "method": "tools/call", "params": {"name": "memwal_recall", "arguments": {"query": "x"}}})
        )
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert [reply["id"] for reply in replies] == [1, 2]
        proc.send_signal(signal.SIGINT)  # stdin stays open
        status = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert status == 0


@pytest.mark.sqlite_only
def test_ctrl_c_during_the_first_model_load_exits_130_never_aborts(server_env, db, tmp_path):
    """The first load builds the model's optimized graph in ONNX Runtime (seconds, with the
    empty cache each run gets here); a Ctrl-C anywhere in it ends with 130 (0 once the recall
    is done), never SIGABRT: an exit that ran the runtime's static destructors under a load
    still running aborted ("terminate called without an active exception")."""
    seeded = _cli({**os.environ, **server_env(MEMWAL_EMBEDDING__MODEL="none")}, "remember", "Coffee: oat", cwd=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    for i, delay in enumerate((0.5, 0.8, 1.1, 1.4, 1.7, 2.0)):
        env = {**os.environ, **server_env(XDG_CACHE_HOME=str(tmp_path / f"cache-{i}"))}
        proc = subprocess.Popen(
            [str(MEMWAL), "recall", "coffee"],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_ctrl_c_as_at_a_terminal,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        # 130; or killed by the SIGINT itself (a shell shows 130 too) when it lands as the
        # interpreter finishes, after its handlers are gone; 0 when the recall had ended.
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err[-2000:])
        assert "terminate called" not in err, err[-2000:]


@pytest.mark.sqlite_only
def test_ctrl_c_does_not_wait_for_an_embedding_model_still_loading(server_env, db, tmp_path):
    """A command's worker loads the model when it has something to embed (here a memory stored
    while embeddings were off); a Ctrl-C must not wait for that load to end (it held the command
    until killed). The model's files here are named pipes nobody writes: the load never ends."""
    stored = _cli({**os.environ, **server_env(MEMWAL_EMBEDDING__MODEL="none")}, "remember", "x", cwd=tmp_path)
    assert stored.returncode == 0, stored.stderr
    model = tmp_path / "stalled-model"
    model.mkdir()
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"):
        os.mkfifo(model / name)
    # 0.5 s after the LLM is asked, the worker is in the load
    status, out, err = _analyze_interrupted(server_env(MEMWAL_EMBEDDING__MODEL_PATH=str(model)), tmp_path, 0.5, 30)
    assert status == 130, (out, err)
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 1  # the one remembered first, nothing of the analyze


@pytest.mark.sqlite_only
def test_a_recall_waits_for_a_model_that_does_not_load_at_most_model_wait_ms(server_env, tmp_path):
    """A model that must be downloaded, with no network, held every first recall 40 s while fastembed
    retried; one whose files never arrive (named pipes nobody writes), forever. After model_wait_ms
    the recall answers by words (the queued fact is matched by its text)."""
    model = tmp_path / "stalled-model"
    model.mkdir()
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"):
        os.mkfifo(model / name)
    env = server_env(
        MEMWAL_EMBEDDING__MODEL_PATH=str(model),
        MEMWAL_RECALL__MODEL_WAIT_MS="300",
        MEMWAL_RECALL__READ_YOUR_WRITES_WAIT_MS="0",
    )
    filed = subprocess.run(
        [MEMWAL, "remember", "User prefers dark roast coffee", "--wait-ms", "0"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert filed.returncode == 0, filed.stderr
    found = subprocess.run(
        [MEMWAL, "recall", "coffee", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert [(hit["text"], hit["pending"]) for hit in hits] == [("User prefers dark roast coffee", True)]


@pytest.mark.sqlite_only  # the exit status of an interrupted command is not the database's business
def test_ctrl_c_stops_a_one_shot_command_with_status_130_and_stores_nothing(server_env, db, tmp_path):
    status, out, err = _analyze_interrupted(server_env(), tmp_path, 0.0, 60)
    assert status == 130, (out, err)
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 0
    assert err.strip().splitlines()[-1] == "memwal-mcp analyze: interrupted: nothing was stored", err


@pytest.mark.sqlite_only
def test_an_interrupted_remember_names_the_job_it_filed(server_env, db, tmp_path):
    """Ctrl-C while `remember` waits for curation: the fact is filed, and the command says as which
    job (the exit status alone read as if nothing had been kept)."""
    proc = subprocess.Popen(
        [MEMWAL, "remember", "The standup moved to 9:30"],
        env=server_env(MEMWAL_SERVER__WORKER="false"),  # nothing curates: the command waits its 10 s
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_at_a_terminal,
    )

    def filed() -> bool:
        try:
            return bool(db.scalar("SELECT count(*) FROM remember_jobs"))
        except Exception:  # no file or no table yet: the command is still starting
            return False

    deadline = time.monotonic() + 60
    while not filed():
        assert time.monotonic() < deadline and proc.poll() is None, "the job was never filed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    (job,) = [row[0] for row in db.rows("SELECT id FROM remember_jobs WHERE status = 'queued'")]
    assert proc.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == (
        f"memwal-mcp remember: interrupted: filed as job {job}, which any later memwal-mcp curates "
        f"if it is not curated yet (`memwal-mcp status {job}` tells)"
    ), err
