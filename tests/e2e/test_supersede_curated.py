"""Supersede with curation on and an LLM configured, as a client sees it: the real `mcp` client
talking to `memwal-mcp` over stdio, the CLI as a subprocess, and the scripted OpenAI-compatible
server on 127.0.0.1 answering as a model that would merge the correction into its target.

A correction is nominated by kNN against the very memory it replaces (or is an exact repeat of
it): folded into that memory, it would leave nothing to supersede it with. It must become its
own memory, with no LLM call, and supersede the target.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from tests.e2e.conftest import MEMWAL, call_ok, call_refused, db_rows, mcp_stdio_session
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.slow

BASE = "The API timeout is 30 s on staging"
CORRECTION = "The API timeout on staging is now 42 s"
MERGED = "The API timeout on staging is now 42 s (previously 30 s)"
SLOW = "The API timeout on production is 30 s"  # nominates BASE too; its LLM call takes a while


def _script(request: dict[str, Any]) -> Reply:
    """A model that merges whatever it is shown into the first nominee (MergeGuard lets this
    body pass: it keeps every number and content word of both)."""
    asked = " ".join(m["content"] for m in request.get("messages", []) if m.get("role") == "user")
    if SLOW in asked:
        return Reply("CREATE", delay_s=3.0)
    return Reply(f"UPDATE C1\n---\n{MERGED}")


@contextlib.asynccontextmanager
async def _served(server_env: Any, tmp_path: Path) -> AsyncIterator[tuple[ClientSession, ScriptedLLM, dict[str, str]]]:
    """`memwal-mcp` over stdio with the scripted model configured: (session, model, environment)."""
    with ScriptedLLM(_script) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(240):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                yield session, llm, env


async def _recalled(session: Any, query: str, collapsed: bool = False) -> list[str]:
    """The hits' ids; with `collapsed`, each followed by the ids of the copies folded into it."""
    hits = (await call_ok(session, "memwal_recall", query=query))["hits"]
    return [i for hit in hits for i in [hit["id"], *(hit["collapsed_ids"] if collapsed else [])]]


def _undo(env: dict[str, str], memory_id: str) -> str:
    done = subprocess.run(
        [str(MEMWAL), "undo", memory_id], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _superseded_both_ways(session: Any, old: str, new: str) -> None:
    old_history = await call_ok(session, "memwal_history", memory_id=old)
    assert (old_history["status"], old_history["superseded_by"]) == ("superseded", new)
    new_history = await call_ok(session, "memwal_history", memory_id=new)
    assert new_history["supersedes"] == [old]
    assert (new_history["revisions"][0]["replaced_by"], new_history["revisions"][0]["merged_ids"]) == (
        "superseded",
        [old],
    )


@pytest.mark.parametrize("correction", [CORRECTION, BASE], ids=["merge", "identical-text"])
async def test_a_correction_the_llm_would_merge_supersedes_its_target_and_undo_restores_it(
    server_env, db_path: Path, tmp_path: Path, correction: str
):
    async with _served(server_env, tmp_path) as (session, llm, env):
        # Without supersedes, the model folds the correction into the fact: it would merge.
        probe = await call_ok(session, "memwal_remember", text=BASE, namespace="probe", wait_ms=20000)
        merged = await call_ok(session, "memwal_remember", text=CORRECTION, namespace="probe", wait_ms=20000)
        assert (merged["decision"], merged["memory_id"]) == ("updated", probe["memory_id"])
        assert len(llm.requests) == 1

        old = await call_ok(session, "memwal_remember", text=BASE, wait_ms=20000)
        new = await call_ok(session, "memwal_remember", text=correction, supersedes=[old["memory_id"]], wait_ms=20000)
        assert (new["status"], new["decision"]) == ("done", "created"), new
        assert new["memory_id"] != old["memory_id"] and new.get("note") is None
        assert len(llm.requests) == 1  # never asked: a supersede is a memory of its own

        assert await _recalled(session, "API timeout on staging") == [new["memory_id"]]
        await _superseded_both_ways(session, old["memory_id"], new["memory_id"])
        # Embedded at once, like any new memory (an exact repeat of a live text is not).
        without = "SELECT count FROM curation_counters WHERE marker = 'curation_created_without_vector'"
        assert db_rows(db_path, without) == []
        bodies = db_rows(db_path, "SELECT id, body FROM memories WHERE namespace = 'default'")
        assert sorted(bodies) == sorted([(old["memory_id"], BASE), (new["memory_id"], correction)])

    assert old["memory_id"] in _undo(env, new["memory_id"])
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            back = await call_ok(session, "memwal_history", memory_id=old["memory_id"])
            assert (back["status"], back["body"]) == ("live", BASE)
            # (With the identical text, recall folds the two copies into one hit.)
            assert old["memory_id"] in await _recalled(session, "API timeout on staging", collapsed=True)


async def test_a_repeat_of_a_correction_in_one_batch_folds_into_the_correction_not_its_target(
    server_env, tmp_path: Path
):
    async with _served(server_env, tmp_path) as (session, llm, _):
        old = await call_ok(session, "memwal_remember", text=BASE, wait_ms=20000)
        target = [old["memory_id"]]
        twice = [{"text": CORRECTION, "supersedes": target}, {"text": "Second", "supersedes": target}]
        assert await call_refused(session, "memwal_remember_many", items=twice) == (
            f"items[1]: supersedes names {old['memory_id']!r}, which items[0] already supersedes; nothing was stored"
        )
        # One call, one batch: the correction (the target's very text), then a repeat of it.
        items = [{"text": BASE, "supersedes": target}, {"text": BASE}]
        first, repeat = (await call_ok(session, "memwal_remember_many", items=items, wait_ms=20000))["jobs"]
        assert (first["decision"], repeat["decision"]) == ("created", "occurrence"), (first, repeat)
        assert repeat["memory_id"] == first["memory_id"] != old["memory_id"]
        assert llm.requests == []
        await _superseded_both_ways(session, old["memory_id"], first["memory_id"])
        assert await _recalled(session, "API timeout on staging") == [first["memory_id"]]


async def test_a_second_supersede_of_a_memory_while_the_first_is_queued_is_refused(
    server_env, db_path: Path, tmp_path: Path
):
    async with _served(server_env, tmp_path) as (session, llm, _):
        old = await call_ok(session, "memwal_remember", text=BASE, wait_ms=20000)
        target = [old["memory_id"]]
        # The lane is busy with an LLM decision for seconds: what is filed now stays queued.
        await call_ok(session, "memwal_remember", text=SLOW)
        first = await call_ok(session, "memwal_remember", text=CORRECTION, supersedes=target)
        assert first["status"] == "queued"
        jobs_before = db_rows(db_path, "SELECT id FROM remember_jobs ORDER BY seq")
        said = (
            f"supersedes names {old['memory_id']!r}, which is already being superseded by queued job"
            f" {first['job_id']}; nothing was stored"
        )
        again = await call_refused(session, "memwal_remember", text="The API timeout is 60 s", supersedes=target)
        assert again == said
        items = [{"text": "x"}, {"text": "The API timeout is 60 s", "supersedes": target}]
        assert await call_refused(session, "memwal_remember_many", items=items) == f"items[1]: {said}"
        assert db_rows(db_path, "SELECT id FROM remember_jobs ORDER BY seq") == jobs_before

        (job,) = (await call_ok(session, "memwal_remember_status", job_ids=[first["job_id"]], wait_ms=20000))["jobs"]
        assert (job["decision"], job["note"]) == ("created", None)
        await _superseded_both_ways(session, old["memory_id"], job["memory_id"])
    assert len(llm.requests) == 1  # the slow fact's decision only
