"""A correction the user just made, still queued, already hides the fact it replaces (issue 19):
the real `mcp` client against `memwal-mcp` over stdio, on SQLite and on PostgreSQL, with the
curation worker held up in a scripted LLM call so the correction stays queued for as long as the
test needs."""

from __future__ import annotations

import subprocess
import threading
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, call_ok, mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

OLD = "The API timeout is 30 seconds"
# Close enough to OLD that curation asks the LLM about it: the call the test holds.
BLOCKER = "API timeout: 30 seconds"  # cosine 0.97 with OLD, another normalized text
NEW = "The API timeout is 42 seconds"


async def test_a_queued_correction_hides_the_old_fact_from_recall_and_list(server_env, db, tmp_path) -> None:
    release = threading.Event()

    def script(request: dict[str, Any]) -> Reply:
        release.wait(120)  # a bound, so a failing test cannot hang the server thread forever
        return Reply("CREATE")

    with ScriptedLLM(script) as llm, anyio.fail_after(240):
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="180")
        try:
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                old = await call_ok(session, "memwal_remember", text=OLD, wait_ms=20000)
                assert old["status"] == "done", old
                await call_ok(session, "memwal_remember", text=BLOCKER)
                with anyio.fail_after(30):  # a bound, not a timing claim
                    while not llm.requests:  # the worker is inside the LLM call now
                        await anyio.sleep(0.05)
                new = await call_ok(session, "memwal_remember", text=NEW, supersedes=[old["memory_id"]])
                assert new["status"] == "queued", new
                job = new["job_id"]

                found = await call_ok(session, "memwal_recall", query="API timeout", limit=10)
                ids = [hit["id"] for hit in found["hits"]]
                assert old["memory_id"] not in ids and job in ids, found
                listed = await call_ok(session, "memwal_list")
                assert old["memory_id"] not in [m["id"] for m in listed["memories"]], listed

                shown = await session.call_tool(
                    "memwal_recall", {"query": "API timeout", "limit": 10, "include_superseded": True}
                )
                marks = {hit["id"]: hit["superseded_by"] for hit in (shown.structured_content or {})["hits"]}
                assert marks.get(old["memory_id"]) == job and marks.get(job, "absent") is None, marks
                assert f"[being replaced by queued job {job}] {OLD}" in tool_text(shown), tool_text(shown)
                listed = await call_ok(session, "memwal_list", include_superseded=True)
                assert {m["id"]: m["superseded_by"] for m in listed["memories"]}.get(old["memory_id"]) == job

                release.set()
                done = await call_ok(session, "memwal_remember_status", job_ids=[job], wait_ms=30000)
                curated = done["jobs"][0]
                assert curated["status"] == "done", curated
                shown = await call_ok(session, "memwal_recall", query="API timeout", limit=10, include_superseded=True)
                marks = {hit["id"]: hit["superseded_by"] for hit in shown["hits"]}
                assert marks.get(old["memory_id"]) == curated["memory_id"], marks
        finally:
            release.set()


async def test_a_queued_correction_shows_in_history_and_forget_query_and_forgetting_it_says_what_is_back(
    server_env, tmp_path
) -> None:
    """With no worker on the database, the correction stays queued: the old fact's history names
    the job about to replace it, a forget --query lists it with recall's mark, and forgetting the
    job gives it back and says so (`live_again`), as forgetting a curated correction does."""
    env = server_env()
    idle = {**env, "MEMWAL_SERVER__WORKER": "false"}
    with anyio.fail_after(240):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            old = (await call_ok(session, "memwal_remember", text=OLD, wait_ms=20000))["memory_id"]
        async with mcp_stdio_session(idle, tmp_path / "stderr.log") as (session, _):
            new = await call_ok(session, "memwal_remember", text=NEW, supersedes=[old])
            assert new["status"] == "queued", new
            job = new["job_id"]
            history = await session.call_tool("memwal_history", {"memory_id": old})
            assert (history.structured_content or {})["being_replaced_by"] == job
            assert f"being replaced by queued job {job}: recall and list leave it out" in tool_text(history)
        listing = subprocess.run(
            [str(MEMWAL), "forget", "--query", "API timeout", "--dry-run"],
            env=idle,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert listing.returncode == 0, listing.stderr
        (line,) = [line for line in listing.stdout.splitlines() if line.startswith(old)]
        assert line.endswith(f"[being replaced by queued job {job}] {OLD}"), listing.stdout
        async with mcp_stdio_session(idle, tmp_path / "stderr.log") as (session, _):
            forgot = await session.call_tool("memwal_forget", {"memory_id": job})
            assert (forgot.structured_content or {})["live_again"] == [old]
            assert f"{old}, which it superseded, is live again" in tool_text(forgot), tool_text(forgot)
            found = await call_ok(session, "memwal_recall", query="API timeout", limit=10)
            assert [hit["id"] for hit in found["hits"]] == [old]
