"""memwal-mcp over stdio, end to end: the real console script, the real MCP client, a real database (each test
on a SQLite file and on PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from memwal_mcp.config import BUNDLED_MODEL
from tests.databases import Database

from .conftest import (
    MEMWAL,
    PROTOCOL_VERSION,
    RawServer,
    mcp_stdio_session,
    tool_text,
)

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

COFFEE = "User prefers dark roast coffee"
# Other facts a "coffee" recall finds relevant (it does not pad a reply with unrelated ones).
OTHER_FACTS = [
    "Bob likes his coffee black",
    "The coffee machine in the office is broken",
    "Espresso beans are ordered every Monday",
    "The user drinks green tea in the afternoon",
]
COFFEE_NOTE = "(4 duplicate copies of the above collapsed; the same fact is stored more than once.)"
JOB_ID = re.compile(r"^j_[0-9a-f]{16}$")
MEMORY_ID = re.compile(r"^m_[0-9a-f]{16}$")


# --- handshake and tool surface -------------------------------------------------------


async def test_initialize_and_list_tools(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, init):
            assert init.server_info.name == "memwal"
            instructions = init.instructions or ""
            assert "memwal_recall" in instructions and "recall" in instructions.lower()
            assert "remember" in instructions.lower()
            assert "secrets" in instructions.lower()

            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            assert {"memwal_remember", "memwal_remember_status", "memwal_recall"} <= set(tools)

            expected_args = {
                "memwal_remember": ({"text", "namespace", "idempotency_key", "wait_ms"}, {"text"}),
                "memwal_remember_status": ({"job_ids", "wait_ms"}, {"job_ids"}),
                "memwal_recall": ({"query", "limit", "namespace", "min_score"}, {"query"}),
            }
            for name, (properties, required) in expected_args.items():
                tool = tools[name]
                assert tool.description, name
                assert tool.input_schema["type"] == "object"
                assert properties <= set(tool.input_schema["properties"]), name
                assert set(tool.input_schema.get("required", [])) == required, name
                assert tool.output_schema is not None, name
                assert tool.output_schema["type"] == "object"
                assert tool.annotations is not None, name

            assert {"job_id", "status", "replayed"} <= set(tools["memwal_remember"].output_schema["properties"])
            assert "jobs" in tools["memwal_remember_status"].output_schema["properties"]
            assert {"hits", "collapsed", "limit", "query"} <= set(tools["memwal_recall"].output_schema["properties"])

            assert tools["memwal_recall"].annotations.read_only_hint is True
            assert tools["memwal_remember_status"].annotations.read_only_hint is True
            assert tools["memwal_remember"].annotations.idempotent_hint is True
            assert tools["memwal_remember"].annotations.read_only_hint is not True


# --- the acceptance scenario ----------------------------------------------------------


async def _remember_all(session) -> list[str]:
    job_ids = []
    for text in [COFFEE] * 5 + OTHER_FACTS:
        result = await session.call_tool("memwal_remember", {"text": text})
        assert not result.is_error, tool_text(result)
        assert JOB_ID.match(result.structured_content["job_id"])
        job_ids.append(result.structured_content["job_id"])
    assert len(set(job_ids)) == 9
    return job_ids


def _check_coffee_recall(result) -> None:
    assert not result.is_error, tool_text(result)
    hits = result.structured_content["hits"]
    texts = [hit["text"] for hit in hits]
    assert len(hits) == 5, texts
    assert len(set(texts)) == 5, texts
    assert set(texts) == {COFFEE, *OTHER_FACTS}
    assert texts[0] == COFFEE
    assert hits[0]["copies"] == 4
    assert all(hit["copies"] == 0 for hit in hits[1:]), hits
    assert result.structured_content["collapsed"] == 4
    assert result.structured_content["limit"] == 5
    assert result.structured_content["query"] == "coffee"
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)

    lines = tool_text(result).splitlines()
    assert lines.count(COFFEE_NOTE) == 1, lines
    assert re.fullmatch(r"1\. \[score=\d\.\d{3}\](?: \[[^\]]+\])* User prefers dark roast coffee", lines[0]), lines
    assert lines[1] == COFFEE_NOTE
    numbered = [line for line in lines if re.match(r"^\d+\. ", line)]
    assert len(numbered) == 5, lines


@pytest.mark.parametrize("curation", ["enabled", "disabled"])
async def test_acceptance_coffee_collapses(server_env, tmp_path: Path, db: Database, curation: str) -> None:
    extra = {"MEMWAL_CURATION__ENABLED": "false"} if curation == "disabled" else {}
    with anyio.fail_after(90):
        async with mcp_stdio_session(server_env(**extra), tmp_path / "stderr.log") as (session, _):
            job_ids = await _remember_all(session)
            # Straight after the remembers: read-your-writes, whatever the worker has done so far.
            _check_coffee_recall(await session.call_tool("memwal_recall", {"query": "coffee", "limit": 5}))

            status = await session.call_tool("memwal_remember_status", {"job_ids": job_ids, "wait_ms": 20000})
            assert not status.is_error, tool_text(status)
            jobs = status.structured_content["jobs"]
            assert [job["job_id"] for job in jobs] == job_ids
            assert all(job["status"] == "done" for job in jobs), jobs
            assert all(MEMORY_ID.match(job["memory_id"]) for job in jobs), jobs

            # Once curated, the same question gives the same answer.
            _check_coffee_recall(await session.call_tool("memwal_recall", {"query": "coffee", "limit": 5}))

    coffee_rows = db.scalar("SELECT count(*) FROM memories WHERE body = ?", (COFFEE,))
    total_rows = db.scalar("SELECT count(*) FROM memories")
    occurrences = db.scalar("SELECT coalesce(sum(occurrences), 0) FROM memories")
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 9
    if curation == "disabled":
        assert coffee_rows == 5
        assert total_rows == 9
        assert occurrences == 0
        assert {job["decision"] for job in jobs} == {"created"}
    else:
        assert coffee_rows == 1
        assert total_rows == 5
        assert occurrences == 4
        coffee_memories = {job["memory_id"] for job in jobs[:5]}
        assert len(coffee_memories) == 1
        assert [job["decision"] for job in jobs[:5]].count("occurrence") == 4


@pytest.mark.parametrize("database", ["fresh", "with-vectors"])
async def test_recall_of_uncurated_facts_still_fills_the_limit(
    server_env, tmp_path: Path, db: Database, database: str
) -> None:
    """Read-your-writes fallback: facts no worker has curated are full candidates, not just matching ones.

    Was a bug up to d7ca4fc, fixed in f14ed67 (this test failed before it): queued jobs were kept only with a
    positive word-overlap or cosine score, so a fresh database answered 1 hit instead of 5.
    """
    env = server_env()
    expected = {COFFEE, *OTHER_FACTS}
    if database == "with-vectors":
        seed = "Seed fact so the vector index exists: the office coffee is fair trade"
        seeded = _cli({**os.environ, **env}, "remember", seed, cwd=tmp_path)
        assert seeded.returncode == 0 and "done (created)" in seeded.stdout, seeded.stderr
        expected.add(seed)
    with anyio.fail_after(60):
        # No curation worker anywhere: every remember stays queued, as it would behind a slow LLM tier.
        async with mcp_stdio_session(env, tmp_path / "stderr.log", args=["serve", "--no-worker"]) as (session, _):
            await _remember_all(session)
            result = await session.call_tool("memwal_recall", {"query": "coffee", "limit": len(expected)})
    assert not result.is_error, tool_text(result)
    hits = result.structured_content["hits"]
    assert hits[0]["text"] == COFFEE and hits[0]["copies"] == 4
    assert {hit["text"] for hit in hits} == expected, tool_text(result)
    assert len(hits) == len(expected)


# --- bad input --------------------------------------------------------------------------


async def test_bad_input_is_a_tool_error_and_the_session_survives(server_env, tmp_path: Path) -> None:
    async def expect_error(session, tool: str, arguments: dict[str, Any], *fragments: str) -> str:
        result = await session.call_tool(tool, arguments)
        text = tool_text(result)
        assert result.is_error, f"{tool} {arguments} should fail, got: {text}"
        for fragment in fragments:
            assert fragment in text, text
        return text

    with anyio.fail_after(60):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await expect_error(session, "memwal_remember", {"text": ""}, "text is empty")
            await expect_error(session, "memwal_remember", {"text": "   \n "}, "text is empty")
            await expect_error(session, "memwal_recall", {"query": "coffee", "limit": 500}, "limit must be", "500")
            await expect_error(session, "memwal_recall", {"query": "coffee", "limit": 0}, "limit must be")
            await expect_error(
                session, "memwal_remember", {"text": "A fact", "namespace": "bad name!"}, "namespace", "bad name!"
            )
            await expect_error(session, "memwal_recall", {"query": "coffee", "namespace": "bad name!"}, "namespace")
            await expect_error(session, "memwal_remember_status", {"job_ids": ["j_0000000000000000"]}, "no job")

            first = await session.call_tool(
                "memwal_remember", {"text": "The build server is ci-01", "idempotency_key": "key-1"}
            )
            assert not first.is_error, tool_text(first)
            assert first.structured_content["replayed"] is False
            again = await session.call_tool(
                "memwal_remember", {"text": "The build server is ci-01", "idempotency_key": "key-1"}
            )
            assert not again.is_error, tool_text(again)
            assert again.structured_content["replayed"] is True
            assert again.structured_content["job_id"] == first.structured_content["job_id"]
            await expect_error(
                session,
                "memwal_remember",
                {"text": "The build server is ci-02", "idempotency_key": "key-1"},
                "key-1",
                "already used",
            )
            await expect_error(
                session,
                "memwal_remember",
                {"text": "The build server is ci-01", "idempotency_key": "key-1", "namespace": "other"},
                "key-1",
                "already used",
                "namespace",
            )
            await expect_error(session, "memwal_remember", {"text": "A fact", "wait_ms": 40000}, "wait_ms")
            await expect_error(
                session, "memwal_remember_status", {"job_ids": [f"j_{i:016x}" for i in range(51)]}, "limit is 50"
            )

            # Still serving after all of that.
            ok = await session.call_tool("memwal_remember", {"text": "The session is still alive", "wait_ms": 10000})
            assert not ok.is_error, tool_text(ok)
            assert ok.structured_content["status"] == "done"
            recall = await session.call_tool("memwal_recall", {"query": "build server", "limit": 3})
            assert not recall.is_error, tool_text(recall)
            assert "The build server is ci-01" in [hit["text"] for hit in recall.structured_content["hits"]]
            assert "ci-02" not in tool_text(recall)


# --- stdout belongs to the protocol ---------------------------------------------------------


@pytest.mark.parametrize("log_level", ["default", "DEBUG"])
async def test_stdout_carries_only_json_rpc(server_env, raw_servers: list[RawServer], log_level: str) -> None:
    extra = {} if log_level == "default" else {"MEMWAL_LOG_LEVEL": log_level}
    with anyio.fail_after(90):
        server = await RawServer.start(server_env(**extra))
        raw_servers.append(server)
        init = await server.initialize()
        assert init["result"]["protocolVersion"] == PROTOCOL_VERSION
        assert init["result"]["serverInfo"]["name"] == "memwal"

        tools = await server.request("tools/list", {})
        assert {"memwal_remember", "memwal_recall"} <= {tool["name"] for tool in tools["result"]["tools"]}

        remembered = await server.call_tool("memwal_remember", {"text": COFFEE, "wait_ms": 15000})
        assert remembered["isError"] is False, remembered
        assert remembered["structuredContent"]["status"] == "done"
        recalled = await server.call_tool("memwal_recall", {"query": "coffee"})
        assert recalled["isError"] is False, recalled
        assert recalled["structuredContent"]["hits"][0]["text"] == COFFEE
        failed = await server.call_tool("memwal_recall", {"query": "coffee", "limit": 500})
        assert failed["isError"] is True

        code = await server.close_stdin_and_wait()
        assert code == 0, "".join(server.stderr_lines)

    assert len(server.stdout_lines) >= 5
    for line in server.stdout_lines:
        assert line.endswith("\n"), repr(line)
        message = json.loads(line)  # raises on anything that is not JSON
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
        assert "id" in message or "method" in message, line
    stderr = "".join(server.stderr_lines)
    assert "INFO memwal_mcp" in stderr, stderr
    assert "embedding model" in stderr and "loaded" in stderr, stderr


# --- several processes, one database file ---------------------------------------------------


async def test_idempotency_key_across_two_processes(server_env, tmp_path: Path, db: Database) -> None:
    env = server_env()
    with anyio.fail_after(90):
        async with (
            mcp_stdio_session(env, tmp_path / "stderr-a.log") as (a, _),
            mcp_stdio_session(env, tmp_path / "stderr-b.log") as (b, _),
        ):
            for round_number in range(3):
                key = f"shared-key-{round_number}"
                text = f"The release train for round {round_number} leaves at noon"
                arguments = {"text": text, "idempotency_key": key, "wait_ms": 15000}
                first, second = await asyncio.gather(
                    a.call_tool("memwal_remember", arguments), b.call_tool("memwal_remember", arguments)
                )
                assert not first.is_error, tool_text(first)
                assert not second.is_error, tool_text(second)
                assert first.structured_content["job_id"] == second.structured_content["job_id"]
                assert sorted([first.structured_content["replayed"], second.structured_content["replayed"]]) == [
                    False,
                    True,
                ]
                assert db.scalar("SELECT count(*) FROM remember_jobs WHERE idempotency_key = ?", (key,)) == 1
                status = await a.call_tool(
                    "memwal_remember_status", {"job_ids": [first.structured_content["job_id"]], "wait_ms": 15000}
                )
                assert status.structured_content["jobs"][0]["status"] == "done"
                assert db.scalar("SELECT count(*) FROM memories WHERE body = ?", (text,)) == 1

    assert db.scalar("SELECT count(*) FROM remember_jobs") == 3
    assert db.scalar("SELECT count(*) FROM memories") == 3
    assert db.scalar("SELECT coalesce(sum(occurrences), 0) FROM memories") == 0


# --- crash recovery ---------------------------------------------------------------------------


def _crash_fact(i: int) -> str:
    # Every fifth remember repeats an earlier fact, so recovery also has occurrences to fold.
    if i % 5 == 4:
        i = i - 4
    return f"Crash test fact number {i}: service-{i} listens on port {8000 + i}"


async def test_sigkill_mid_curation_loses_nothing_and_applies_nothing_twice(
    server_env, tmp_path: Path, db: Database, raw_servers: list[RawServer]
) -> None:
    env = server_env(MEMWAL_EMBEDDING__MODEL=BUNDLED_MODEL)
    with anyio.fail_after(120):
        a = await RawServer.start(env)
        raw_servers.append(a)
        await a.initialize()
        # One curated remember first, so the model is loaded and the worker is busy when the burst lands.
        warm = await a.call_tool("memwal_remember", {"text": "Warm-up fact before the burst", "wait_ms": 20000})
        assert warm["structuredContent"]["status"] == "done", warm
        job_ids = [warm["structuredContent"]["job_id"]]

        # 50 remembers in pipelined bursts of 10, so the worker is curating while more arrive.
        for burst in range(5):
            request_ids = [
                await a.send_request("tools/call", {"name": "memwal_remember", "arguments": {"text": _crash_fact(i)}})
                for i in range(burst * 10, burst * 10 + 10)
            ]
            for request_id in request_ids:
                reply = await a.response(request_id)
                assert reply["result"]["isError"] is False, reply
                job_ids.append(reply["result"]["structuredContent"]["job_id"])
        await a.kill()  # SIGKILL the moment the last remember was acknowledged
        assert a.proc.returncode == -9

        assert len(set(job_ids)) == 51
        queued_at_crash = db.scalar("SELECT count(*) FROM remember_jobs WHERE status = 'queued'")

        async with mcp_stdio_session(env, tmp_path / "stderr-b.log") as (b, _):
            outcomes: dict[str, dict[str, Any]] = {}
            for start in range(0, len(job_ids), 50):
                chunk = job_ids[start : start + 50]
                status = await b.call_tool("memwal_remember_status", {"job_ids": chunk, "wait_ms": 30000})
                assert not status.is_error, tool_text(status)
                outcomes.update({job["job_id"]: job for job in status.structured_content["jobs"]})
            assert set(outcomes) == set(job_ids)
            not_done = [job for job in outcomes.values() if job["status"] != "done"]
            assert not not_done, f"{queued_at_crash} queued at the crash; still not done: {not_done}"

    jobs = db.rows("SELECT id, status, decision, memory_id FROM remember_jobs")
    assert {row[0] for row in jobs} == set(job_ids), "the journal has jobs nobody acknowledged, or lost some"
    memories = db.rows("SELECT id, source_job_id, occurrences, body FROM memories WHERE status = 'live'")
    total_memories = db.scalar("SELECT count(*) FROM memories")
    assert total_memories == len(memories)

    # Each job applied exactly once: a created memory per 'created' job, an occurrence per 'occurrence' job.
    created = {row[0]: row[3] for row in jobs if row[2] == "created"}
    occurrence_jobs = [row for row in jobs if row[2] == "occurrence"]
    assert len(created) + len(occurrence_jobs) == len(jobs)
    assert len(memories) + sum(row[2] for row in memories) == len(jobs)
    assert len({row[1] for row in memories}) == len(memories), "two memories from one job"
    assert {row[1]: row[0] for row in memories} == created
    memory_ids = {row[0] for row in memories}
    assert all(row[3] in memory_ids for row in jobs)
    # Exact repeats folded, never duplicated: one memory per distinct text.
    distinct_texts = {"Warm-up fact before the burst", *(_crash_fact(i) for i in range(50))}
    assert sorted(row[3] for row in memories) == sorted(distinct_texts)
    assert len(occurrence_jobs) == 10


# --- the CLI from a shell --------------------------------------------------------------------


def _cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MEMWAL), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_cli_remember_recall_stats(server_env, tmp_path: Path, db: Database) -> None:
    env = {**os.environ, **server_env()}
    cwd = tmp_path

    first = _cli(env, "remember", COFFEE, cwd=cwd)
    assert first.returncode == 0, first.stderr
    assert re.fullmatch(r"Remembered: j_[0-9a-f]{16}: done \(created\) -> memory m_[0-9a-f]{16}\n", first.stdout), (
        first.stdout
    )
    memory_id = first.stdout.split()[-1]
    again = _cli(env, "remember", "user prefers  DARK roast coffee ", cwd=cwd)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(f"done (occurrence) -> memory {memory_id}"), again.stdout
    other = _cli(env, "remember", OTHER_FACTS[0], "--json", cwd=cwd)
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["decision"] == "created"

    recall = _cli(env, "recall", "coffee", cwd=cwd)
    assert recall.returncode == 0, recall.stderr
    lines = recall.stdout.splitlines()
    assert re.fullmatch(r"1\. \[score=\d\.\d{3}\](?: \[[^\]]+\])* User prefers dark roast coffee", lines[0]), (
        recall.stdout
    )
    assert lines[1] == "(1 duplicate copy of the above collapsed; the same fact is stored more than once.)"
    second = r"2\. \[score=\d\.\d{3}\](?: \[[^\]]+\])* " + re.escape(OTHER_FACTS[0])
    assert any(re.fullmatch(second, line) for line in lines), recall.stdout

    as_json = _cli(env, "recall", "coffee", "--limit", "1", "--json", cwd=cwd)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert [hit["text"] for hit in data["hits"]] == [COFFEE]
    assert data["hits"][0]["copies"] == 1

    stats = _cli(env, "stats", cwd=cwd)
    assert stats.returncode == 0, stats.stderr
    out = stats.stdout.splitlines()
    assert re.fullmatch(rf"database:\s+{re.escape(db.shown_as)}", out[0]), stats.stdout
    assert any(re.fullmatch(r"queue:\s+done=3", line) for line in out), stats.stdout
    assert "curation markers:" in out, stats.stdout
    assert any(re.fullmatch(r"\s+curation_created:?\s+2", line) for line in out), stats.stdout
    assert any(re.fullmatch(r"\s+curation_occurrence:?\s+1", line) for line in out), stats.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["remember", ""], "text is empty"),
        (["remember", "A fact", "--namespace", "bad name!"], "namespace"),
        (["recall", "coffee", "--limit", "500"], "limit must be"),
        (["recall", "coffee", "--min-score", "2"], "--min-score must be"),
        (["status", "j_0000000000000000"], None),
    ],
    ids=["empty-text", "bad-namespace", "limit-500", "min-score-2", "unknown-job"],
)
def test_cli_bad_input_exits_nonzero_with_error_on_stderr(
    server_env, tmp_path: Path, args: list[str], fragment: str | None
) -> None:
    env = {**os.environ, **server_env()}
    result = _cli(env, *args, cwd=tmp_path)
    if fragment is None:  # not the caller's input but a missing record: exit 1
        assert result.returncode == 1, (result.returncode, result.stderr)
    else:
        assert result.returncode == 2, (result.returncode, result.stderr)
        assert fragment in result.stderr, result.stderr
    assert "error:" in result.stderr, result.stderr
    assert result.stdout == ""


def test_cli_idempotency_key_reuse_exits_2(server_env, tmp_path: Path, db: Database) -> None:
    env = {**os.environ, **server_env()}
    ok = _cli(env, "remember", "The build server is ci-01", "--key", "k-1", "--wait-ms", "0", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    reused = _cli(env, "remember", "The build server is ci-02", "--key", "k-1", "--wait-ms", "0", cwd=tmp_path)
    assert reused.returncode == 2
    assert "error:" in reused.stderr and "already used" in reused.stderr, reused.stderr
    assert reused.stdout == ""
    assert db.scalar("SELECT count(*) FROM remember_jobs") == 1


def test_cli_owners_are_walls(server_env, tmp_path: Path, db: Database) -> None:
    alice = {**os.environ, **server_env(MEMWAL_OWNER="alice")}
    bob = {**os.environ, **server_env(MEMWAL_OWNER="bob")}

    kept = _cli(alice, "remember", "Alice takes the 8:15 train", "--key", "same-key", "--json", cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    alice_job = json.loads(kept.stdout)["job_id"]

    nothing = _cli(bob, "recall", "train", cwd=tmp_path)
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == "No memories match 'train' in namespace 'default'.\n"
    hidden = _cli(bob, "status", alice_job, cwd=tmp_path)
    assert hidden.returncode == 1 and "no job" in hidden.stderr and hidden.stdout == ""
    # Idempotency keys belong to their owner: Bob's "same-key" is a new event, not a reuse.
    own = _cli(bob, "remember", "Bob cycles to work", "--key", "same-key", "--json", cwd=tmp_path)
    assert own.returncode == 0, own.stderr
    assert json.loads(own.stdout)["job_id"] != alice_job

    mine = _cli(alice, "recall", "commute to work", "--limit", "5", "--json", cwd=tmp_path)
    assert [hit["text"] for hit in json.loads(mine.stdout)["hits"]] == ["Alice takes the 8:15 train"]
    assert db.rows("SELECT owner, count(*) FROM memories GROUP BY owner ORDER BY owner") == [
        ("alice", 1),
        ("bob", 1),
    ]
