"""Fuzz every tool over stdio with the real MCP client against one `memwal-mcp` process.

The same argument vocabulary as tests/test_fuzz.py, limited to what JSON and the MCP
client can carry (the client cannot send lone surrogates; they are sent as raw JSON-RPC
lines below instead). Every call must come back as a result or as an isError result
whose text is "Error executing tool <name>: <a short readable sentence>" -- never the
bare "Error executing tool <name>" the SDK sends when a tool crashed, never a traceback
or an internal exception name -- and the session must keep serving. Afterwards every
accepted text comes back byte for byte from memwal_list (and from memwal_recall for a
sample), and `memwal-mcp check` passes.

Inputs that hit a bug already known are skipped (tests.test_fuzz.known_bug); the bugs
that show over MCP are pinned by strict xfail tests at the bottom.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwal_mcp.normalize import normalize_text

from ..test_fuzz import INTERNALS, FuzzLog, Vocabulary, known_bug
from .conftest import MEMWAL, RawServer, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

MAX_MESSAGE = 2000  # a type error names every wrong argument
CALL_LIMIT_S = 45.0


def check_reply(tool: str, arguments: dict[str, Any], result: Any) -> str:
    text = tool_text(result)
    what = f"{tool} {json.dumps(arguments, ensure_ascii=False)[:300]}"
    if not result.is_error:
        assert result.structured_content is not None, what
        assert "Traceback" not in text, what
        return "ok"
    prefix = f"Error executing tool {tool}: "
    assert text.startswith(prefix), f"a crash, not a refusal, for {what}: {text!r}"
    message = text[len(prefix) :]
    assert message.strip(), what
    assert len(message) <= MAX_MESSAGE, f"{len(message)}-character error for {what}: {message[:300]}"
    assert not INTERNALS.search(message), f"internal detail for {what}: {message[:600]}"
    assert "\n" not in message.strip(), f"not one sentence for {what}: {message[:300]}"
    return "refused"


def _record(log: FuzzLog, tool: str, arguments: dict[str, Any], result: Any) -> None:
    data = result.structured_content
    if result.is_error or data is None:
        return
    if tool == "memwal_remember" and not data["replayed"]:
        log.accepted[data["job_id"]] = (data["namespace"], arguments["text"])
    elif tool == "memwal_remember_status":
        log.memories += [j["memory_id"] for j in data["jobs"] if j["memory_id"] and j["memory_id"] not in log.memories]
    elif tool == "memwal_list":
        log.memories += [m["id"] for m in data["memories"] if m["id"] not in log.memories]
        if data["next_cursor"]:
            log.cursors.append(data["next_cursor"])
    elif tool == "memwal_forget":
        log.forgotten.update(data["erased_memories"])


async def _verify_faithful(session: Any, log: FuzzLog) -> None:
    ids = list(log.accepted)
    jobs: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 50):
        status = await session.call_tool(
            "memwal_remember_status", {"job_ids": ids[start : start + 50], "wait_ms": 30_000}
        )
        assert not status.is_error, tool_text(status)
        jobs.update({job["job_id"]: job for job in status.structured_content["jobs"]})
    assert all(job["status"] == "done" for job in jobs.values()), [j for j in jobs.values() if j["status"] != "done"]
    listed: dict[str, str] = {}
    cursor = None
    while True:
        page = await session.call_tool("memwal_list", {"limit": 100, **({"cursor": cursor} if cursor else {})})
        assert not page.is_error, tool_text(page)
        listed.update({item["id"]: item["text"] for item in page.structured_content["memories"]})
        cursor = page.structured_content["next_cursor"]
        if cursor is None:
            break
    checked = 0
    sample: list[tuple[str, str]] = []
    for job_id, (namespace, text) in log.accepted.items():
        job = jobs[job_id]
        if job["memory_id"] in log.forgotten or job["decision"] == "forgotten":
            continue
        body = listed[job["memory_id"]]
        if job["decision"] == "created":
            assert body == text, f"stored {body[:80]!r}, was given {text[:80]!r}"
            checked += 1
            if len(text.encode()) <= 4096 and len(re.findall(r"[A-Za-z]{3,}", text)) >= 2:
                sample.append((namespace, text))
        else:
            assert normalize_text(body) == normalize_text(text)
            checked += 1
    # Every accepted fact that was not forgotten is checked; how many of them the fuzz forgot
    # depends on how far curation got meanwhile, so the floor counts repeats as well as creations.
    assert checked >= 20, (checked, log.outcomes)
    for namespace, text in sample[:25]:
        recall = await session.call_tool("memwal_recall", {"query": text, "namespace": namespace, "limit": 10})
        assert not recall.is_error, tool_text(recall)
        assert text in [hit["text"] for hit in recall.structured_content["hits"]], text[:80]


def test_fuzz_every_tool_over_stdio(server_env, tmp_path: Path) -> None:
    env = server_env()
    log = FuzzLog()
    kinds: dict[str, int] = {}
    calls = Vocabulary(json_only=True).call()
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(mcp_stdio_session(env, tmp_path / "stderr.log")) as (session, _):

            async def one(tool: str, raw: dict[str, Any]) -> None:
                arguments = {name: log.resolve(value) for name, value in raw.items()}
                if known_bug(tool, arguments):
                    log.skipped[tool] = log.skipped.get(tool, 0) + 1
                    return
                with anyio.fail_after(CALL_LIMIT_S):
                    result = await session.call_tool(tool, arguments)
                kind = check_reply(tool, arguments, result)
                kinds[f"{tool}: {kind}"] = kinds.get(f"{tool}: {kind}", 0) + 1
                log.count(f"{tool}: {kind}")
                _record(log, tool, arguments, result)

            @settings(
                max_examples=500,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(batch=st.lists(calls, min_size=1, max_size=4))
            def fuzz(batch: list[tuple[str, dict[str, Any]]]) -> None:
                for tool, arguments in batch:
                    portal.call(one, tool, arguments)

            fuzz()

            async def finish() -> None:
                with anyio.fail_after(120):
                    alive = await session.call_tool(
                        "memwal_remember", {"text": "Still serving after the fuzz", "wait_ms": 15_000}
                    )
                    assert not alive.is_error and alive.structured_content["status"] == "done", tool_text(alive)
                    _record(log, "memwal_remember", {"text": "Still serving after the fuzz"}, alive)
                    await _verify_faithful(session, log)

            portal.call(finish)
    print("fuzz over stdio:", dict(sorted(kinds.items())), "skipped (known bugs):", log.skipped)
    assert kinds.get("memwal_remember: ok", 0) >= 40, kinds
    assert len(kinds) >= 12, kinds
    check = subprocess.run([str(MEMWAL), "check"], env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    stderr = (tmp_path / "stderr.log").read_text(errors="replace")
    assert "raised an unexpected exception" not in stderr, stderr[-4000:]


# --- lone surrogates, which only raw JSON-RPC can carry -----------------------------------------------

_SURROGATE_CALLS = [
    ("memwal_remember", '{"text": "lone \\ud800 surrogate"}'),
    ("memwal_remember", '{"text": "fact", "idempotency_key": "\\udfff"}'),
    ("memwal_remember_status", '{"job_ids": ["\\ud800"]}'),
    ("memwal_recall", '{"query": "\\udc00"}'),
    ("memwal_list", '{"namespace": "\\ud83d"}'),
    ("memwal_history", '{"memory_id": "\\ud800"}'),
    ("memwal_forget", '{"memory_id": "\\ud800"}'),
]


async def _send_raw(server: RawServer, tool: str, arguments_json: str) -> int:
    server._next_id += 1  # the line is written by hand, the id must not collide
    request_id = server._next_id
    line = (
        '{"jsonrpc": "2.0", "id": ' + str(request_id) + ', "method": "tools/call", '
        '"params": {"name": "' + tool + '", "arguments": ' + arguments_json + "}}"
    )
    assert server.proc.stdin is not None
    server.proc.stdin.write(line.encode("ascii") + b"\n")
    await server.proc.stdin.drain()
    return request_id


async def test_lone_surrogates_over_raw_json_rpc_do_not_break_the_session(server_env, raw_servers) -> None:
    with anyio.fail_after(90):
        server = await RawServer.start(server_env())
        raw_servers.append(server)
        await server.initialize()
        ids = [await _send_raw(server, tool, arguments) for tool, arguments in _SURROGATE_CALLS]
        ok = await server.call_tool("memwal_remember", {"text": "A fact after the surrogates", "wait_ms": 15_000})
        assert ok["isError"] is False and ok["structuredContent"]["status"] == "done", ok
        recall = await server.call_tool("memwal_recall", {"query": "fact after the surrogates"})
        assert recall["structuredContent"]["hits"][0]["text"] == "A fact after the surrogates"
        for request_id in ids:  # each was refused as a tool error, not a crash
            reply = await server.response(request_id, timeout=5)
            text = reply["result"]["content"][0]["text"]
            assert reply["result"]["isError"] is True and ": " in text, reply
        assert await server.close_stdin_and_wait() == 0
    for line in server.stdout_lines:
        json.loads(line)
    assert "Traceback" not in "".join(server.stderr_lines)


async def test_a_request_with_a_lone_surrogate_gets_an_answer(server_env, raw_servers) -> None:
    """The SDK's parser refuses it (not Unicode text); memwal reads it and the tool refuses the argument
    by name, as any other bad input, and the session goes on. A line that is not JSON at all gets
    JSON-RPC's Parse error."""
    with anyio.fail_after(60):
        server = await RawServer.start(server_env())
        raw_servers.append(server)
        await server.initialize()
        request_id = await _send_raw(server, "memwal_remember", '{"text": "lone \\ud800 surrogate"}')
        reply = await server.response(request_id, timeout=5)
        assert reply["result"]["isError"] is True, reply
        assert reply["result"]["content"][0]["text"] == (
            "Error executing tool memwal_remember: text is not valid Unicode: lone surrogate U+D800 at position 5"
        )

        assert server.proc.stdin is not None
        server.proc.stdin.write(b'{"jsonrpc": "2.0", "id": 9999, "method": \n')
        await server.proc.stdin.drain()
        reply = await server.response(None, timeout=5)
        assert reply["error"]["code"] == -32700, reply

        request_id = await _send_raw(server, "memwal_remember", '{"text": "The session survived", "wait_ms": 5000}')
        reply = await server.response(request_id, timeout=30)
        assert reply["result"]["isError"] is False, reply


# --- known bugs that show over MCP ----------------------------------------------------------------------


async def _session_calls(env: dict[str, str], stderr: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    results = []
    with anyio.fail_after(90):
        async with mcp_stdio_session(env, stderr) as (session, _):
            for tool, arguments in calls:
                results.append(await session.call_tool(tool, arguments))
    return results


async def test_an_occurred_at_outside_the_calendar_does_not_poison_recall(server_env, tmp_path: Path) -> None:
    remembered, recalled, listed = await _session_calls(
        server_env(),
        tmp_path / "stderr.log",
        [
            (
                "memwal_remember",
                {
                    "text": "A fact dated at the end of time",
                    "occurred_at": "9999-12-31T23:59:59-14:00",
                    "wait_ms": 15_000,
                },
            ),
            ("memwal_recall", {"query": "anything at all"}),
            ("memwal_list", {}),
        ],
    )
    for tool, result in (("memwal_remember", remembered), ("memwal_recall", recalled), ("memwal_list", listed)):
        check_reply(tool, {}, result)
    assert not recalled.is_error and not listed.is_error


async def test_until_the_last_day_of_the_calendar_is_answered(server_env, tmp_path: Path) -> None:
    (result,) = await _session_calls(
        server_env(), tmp_path / "stderr.log", [("memwal_recall", {"query": "coffee", "until": "9999-12-31"})]
    )
    check_reply("memwal_recall", {}, result)


async def test_a_forged_cursor_is_refused_in_words(server_env, tmp_path: Path) -> None:
    forged = base64.urlsafe_b64encode(b"1.0:99999999999999999999999").decode().rstrip("=")
    (result,) = await _session_calls(server_env(), tmp_path / "stderr.log", [("memwal_list", {"cursor": forged})])
    check_reply("memwal_list", {}, result)


async def test_a_huge_namespace_gets_a_short_error(server_env, tmp_path: Path) -> None:
    (result,) = await _session_calls(
        server_env(), tmp_path / "stderr.log", [("memwal_remember", {"text": "A fact", "namespace": "n" * 70_000})]
    )
    check_reply("memwal_remember", {}, result)


async def test_wrong_types_are_refused_in_memwals_words(server_env, tmp_path: Path) -> None:
    results = await _session_calls(
        server_env(),
        tmp_path / "stderr.log",
        [
            ("memwal_remember", {"text": 5}),
            ("memwal_remember", {"text": "A fact", "wait_ms": None}),
            ("memwal_recall", {"query": ["coffee"]}),
        ],
    )
    texts = [tool_text(result) for result in results]
    assert "text must be a string" in texts[0], texts[0]
    assert not results[1].is_error, texts[1]
    assert "query must be a string" in texts[2], texts[2]
