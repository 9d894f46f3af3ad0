"""forget --query and forget by id, through the CLI as a subprocess on a real SQLite file.

forget --query is destructive: it erases only what the query names (a shared content word,
or a close meaning), every stored copy of it, and facts still queued too; the dry run lists
exactly that. A queued hit's id (j_...) can be forgotten, and forgetting twice says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, base_env, call_ok, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

FACTS = [
    "The cat is named Whiskers",
    "User prefers dark roast coffee",
    "Alice takes the 8:15 train",
    "Bob is allergic to peanuts",
    "User's favourite band is Radiohead",
    "The dentist appointment is on Tuesday",
    "User speaks Portuguese",
    "The project deadline moved to Friday",
    "User runs 5 km every morning",
    "User is learning the cello",
    "Mom's birthday is 12 June",
]
# What status says of a job a forget erased while it was still queued.
FORGOTTEN_UNCURATED = "forgotten before it was curated (its text is erased; it became no memory)"


class Cli:
    def __init__(self, tmp_path: Path, **extra: str) -> None:
        self.db = tmp_path / "data" / "memwal.db"
        self.env = base_env(tmp_path, self.db, **extra)
        self.stderr = tmp_path / "stderr.log"

    async def remember_all(self, *facts: dict[str, Any]) -> list[dict[str, Any]]:
        """Each fact (memwal_remember's arguments) remembered and curated, in order, by one stdio
        server, gone before the test goes on: a CLI process per fact would spend a second each
        loading the package and the model for what is only the test's setup."""
        with anyio.fail_after(120):
            async with mcp_stdio_session(self.env, self.stderr) as (session, _):
                return [await call_ok(session, "memwal_remember", wait_ms=20000, **fact) for fact in facts]

    async def run(self, *args: str, **extra: str) -> str:
        done = await anyio.run_process([str(MEMWAL), *args], env={**self.env, **extra}, check=False)
        assert done.returncode == 0, (args, done.stdout.decode(), done.stderr.decode())
        return done.stdout.decode()

    async def json(self, *args: str, **extra: str) -> Any:
        return json.loads(await self.run(*args, "--json", **extra))

    async def texts(self) -> list[str]:
        return sorted(item["text"] for item in (await self.json("list"))["memories"])


async def test_forget_query_about_something_never_stored_erases_nothing(tmp_path: Path):
    cli = Cli(tmp_path)
    await cli.remember_all(*({"text": fact} for fact in FACTS))
    for query in ("quantum physics", "chocolate cake recipe", "weather forecast"):
        # Recall may still back-fill weakly related facts; forget must not erase them.
        assert await cli.run("forget", "--query", query, "--dry-run") == "nothing matches.\n"
        assert await cli.run("forget", "--query", query, "--yes") == "nothing matches.\n"
    assert await cli.texts() == sorted(FACTS)

    planned = await cli.json("forget", "--query", "Alice train", "--dry-run")
    assert [item["text"] for item in planned["would_forget"]] == ["Alice takes the 8:15 train"]
    erased = await cli.json("forget", "--query", "Alice train", "--yes")
    assert [o["memory_id"] for o in erased] == [item["id"] for item in planned["would_forget"]]
    assert await cli.texts() == sorted(f for f in FACTS if "Alice" not in f)


async def test_forget_query_with_curation_off_erases_every_copy(tmp_path: Path):
    cli = Cli(tmp_path, MEMWAL_CURATION__ENABLED="false")
    fact = "The garage door code is 4417"
    await cli.remember_all({"text": fact}, {"text": fact}, {"text": fact}, {"text": "The garden hose is in the shed"})
    planned = await cli.json("forget", "--query", "garage door code", "--limit", "1", "--dry-run")
    assert [item["text"] for item in planned["would_forget"]] == [fact] * 3
    assert len({item["id"] for item in planned["would_forget"]}) == 3
    await cli.run("forget", "--query", "garage door code", "--limit", "1", "--yes")
    assert await cli.texts() == ["The garden hose is in the shed"]
    hits = (await cli.json("recall", "garage door code"))["hits"]
    assert all("4417" not in hit["text"] for hit in hits), hits


async def test_forget_query_erases_superseded_and_expired_copies_and_says_which_they_are(tmp_path: Path):
    """They left recall, but still hold the text: erasing "everything about X" erases them too."""
    cli = Cli(tmp_path)
    with anyio.fail_after(120):
        async with mcp_stdio_session(cli.env, cli.stderr) as (session, _):
            old = await call_ok(session, "memwal_remember", text="The Zyxwvut lab door code is 4417", wait_ms=20000)
            new = await call_ok(
                session,
                "memwal_remember",
                text="The Zyxwvut lab door code is 5521",
                supersedes=[old["memory_id"]],
                wait_ms=20000,
            )
            spare = await call_ok(
                session,
                "memwal_remember",
                text="The Zyxwvut lab spare door code was 9090",
                expires_at="2020-01-31",
                wait_ms=20000,
            )
            await call_ok(session, "memwal_remember", text="The garden hose is in the shed", wait_ms=20000)
    assert any(b"zyxwvut" in f.read_bytes().lower() for f in cli.db.parent.iterdir()), "the check must see it first"

    planned = await cli.run("forget", "--query", "Zyxwvut lab door code", "--dry-run")
    lines = planned.splitlines()
    assert lines[0] == "would forget:" and len(lines) == 4, planned
    marked = {line.split(" ")[0]: line for line in lines[1:]}
    assert marked[old["memory_id"]].endswith(f"[superseded by {new['memory_id']}] The Zyxwvut lab door code is 4417")
    assert marked[spare["memory_id"]].endswith("[expired 2020-01-31] The Zyxwvut lab spare door code was 9090")
    assert marked[new["memory_id"]].endswith("] The Zyxwvut lab door code is 5521")
    # The superseded one first: erased after the one that replaced it, it would come back live in between.
    assert list(marked).index(old["memory_id"]) < list(marked).index(new["memory_id"])
    listed = (await cli.json("forget", "--query", "Zyxwvut lab door code", "--dry-run"))["would_forget"]
    assert {(item["id"], item["expired"], item["superseded_by"]) for item in listed} == {
        (old["memory_id"], False, new["memory_id"]),
        (new["memory_id"], False, None),
        (spare["memory_id"], True, None),
    }

    out = await cli.run("forget", "--query", "Zyxwvut lab door code", "--yes")
    assert [line.split(" ")[1] for line in out.splitlines()] == list(marked), out
    assert "live again" not in out
    assert not [f.name for f in cli.db.parent.iterdir() if b"zyxwvut" in f.read_bytes().lower()]
    everything = await cli.json("list", "--include-expired", "--include-superseded")
    assert [item["text"] for item in everything["memories"]] == ["The garden hose is in the shed"]


async def test_forget_query_erases_a_fact_still_queued(tmp_path: Path):
    cli = Cli(tmp_path)
    await cli.run("remember", "The garden hose is in the shed")
    job = await cli.json("remember", "--wait-ms", "0", "My bank PIN is 4821")
    assert job["status"] == "queued"  # the short-lived CLI leaves it to the next worker

    planned = await cli.run("forget", "--query", "bank PIN", "--dry-run")
    assert f"{job['job_id']} " in planned and "My bank PIN is 4821" in planned, planned
    out = await cli.run("forget", "--query", "bank PIN", "--yes")
    assert f"forgot queued fact {job['job_id']}" in out, out
    (status,) = await cli.json("status", job["job_id"])
    assert status["status"] == "done" and status["decision"] == "forgotten", status
    assert not [f.name for f in cli.db.parent.iterdir() if b"4821" in f.read_bytes()]
    hits = (await cli.json("recall", "bank PIN"))["hits"]
    assert all("4821" not in hit["text"] for hit in hits), hits
    assert await cli.texts() == ["The garden hose is in the shed"]


async def test_a_pending_hits_job_id_can_be_forgotten_and_its_key_is_released(tmp_path: Path):
    cli = Cli(tmp_path)
    job = await cli.json("remember", "--wait-ms", "0", "--key", "pin", "My bank PIN is 4821")
    out = await cli.run("forget", job["job_id"])
    assert out.startswith(f"forgot queued fact {job['job_id']}"), out
    # The key is free again: new text under it is a new fact, not refused.
    again = await cli.json("remember", "--key", "pin", "My bank PIN is 9999")
    assert again["job_id"] != job["job_id"] and again["status"] == "done", again
    assert await cli.texts() == ["My bank PIN is 9999"]


async def test_a_curated_jobs_id_forgets_the_memory_it_became(tmp_path: Path):
    cli = Cli(tmp_path)
    job = await cli.json("remember", "The locker combination is 12-34-56")
    out = await cli.run("forget", job["job_id"])
    assert out.startswith(f"forgot {job['memory_id']} (the memory remember job {job['job_id']} became"), out
    assert await cli.texts() == []


async def test_forgetting_twice_says_it_was_already_forgotten(tmp_path: Path):
    cli = Cli(tmp_path)
    first = await cli.json("remember", "The locker combination is 12-34-56")
    await cli.run("remember", "The locker combination is 12-34-56")
    once = await cli.json("forget", first["memory_id"])
    assert once["erased_jobs"] == 2 and once["already_forgotten"] is False
    assert (
        await cli.run("forget", first["memory_id"])
        == f"{first['memory_id']} was already forgotten; nothing more was erased\n"
    )
    twice = await cli.json("forget", first["memory_id"])
    assert twice["already_forgotten"] is True and twice["erased_jobs"] == 0 and twice["erased_memories"] == []
    assert (await cli.json("forget", first["job_id"]))["already_forgotten"] is True


async def test_a_fact_stored_once_is_not_reported_as_two_copies(tmp_path: Path):
    """The queued job and the memory a recall's own worker curates from it are one fact."""
    cli = Cli(tmp_path)
    await cli.run("remember", "The garden hose is in the shed")
    for attempt in range(4):
        fact = f"Fact {attempt}: the boat is moored at pier {attempt}"
        await cli.run("remember", "--wait-ms", "0", fact)
        found = await cli.json(
            "recall", f"boat moored pier {attempt}", "--limit", "2", MEMWAL_RECALL__READ_YOUR_WRITES_WAIT_MS="100"
        )
        same = [hit for hit in found["hits"] if hit["text"] == fact]
        assert len(same) == 1 and same[0]["copies"] == 0, found


async def test_facts_forgotten_before_curation_leave_a_store_that_passes_check(tmp_path: Path):
    """A queued fact erased by its job id, a queued repeat of a live memory erased by its job id,
    and a queued fact erased by forget --query never became memories: that is a legitimate
    state, which check, backup's check of its copy, doctor and an export/import round trip
    accept, and status says what happened instead of naming a memory that does not exist."""
    cli = Cli(tmp_path)
    hose = "The garden hose is in the shed"
    live = await cli.json("remember", hose)
    with anyio.fail_after(120):
        # No worker: the facts stay queued, as behind a backlog.
        async with mcp_stdio_session(cli.env, tmp_path / "stderr.log", args=["serve", "--no-worker"]) as (session, _):
            jobs = []
            for text in ["My bank PIN is 4821", hose, "The spare key is under the blue flowerpot"]:
                result = await session.call_tool("memwal_remember", {"text": text})
                assert result.structured_content["status"] == "queued", tool_text(result)
                jobs.append(result.structured_content["job_id"])
            for job in jobs[:2]:
                result = await session.call_tool("memwal_forget", {"memory_id": job})
                assert not result.is_error, tool_text(result)
            status = await session.call_tool("memwal_remember_status", {"job_ids": jobs[:2]})
    assert [(j["status"], j["decision"], j["memory_id"]) for j in status.structured_content["jobs"]] == [
        ("done", "forgotten", None)
    ] * 2
    assert tool_text(status).splitlines() == [f"{job}: {FORGOTTEN_UNCURATED}" for job in jobs[:2]], tool_text(status)
    out = await cli.run("forget", "--query", "spare key flowerpot", "--yes")
    assert f"forgot queued fact {jobs[2]}" in out, out

    lines = (await cli.run("status", *jobs)).splitlines()
    assert lines == [f"{job}: {FORGOTTEN_UNCURATED}" for job in jobs], lines
    assert await cli.texts() == [hose]  # forgetting the queued repeat left the memory it repeats
    assert (await cli.json("status", live["job_id"]))[0]["memory_id"] == live["memory_id"]

    assert (await cli.run("check")).splitlines()[-1].startswith("check ok: 0 errors, 0 warnings")
    await cli.run("backup", str(tmp_path / "copy.db"))  # verifies the copy: non-zero exit on any error
    doctor = await cli.json("doctor")
    assert [c["status"] for c in doctor["checks"] if c["name"] == "integrity"] == ["ok"], doctor["checks"]

    await cli.run("export", str(tmp_path / "out.jsonl"))
    (tmp_path / "other").mkdir()
    other = Cli(tmp_path / "other")
    await other.run("import", str(tmp_path / "out.jsonl"))
    assert (await other.run("check")).splitlines()[-1].startswith("check ok: 0 errors, 0 warnings")
    assert (await other.run("status", *jobs)).splitlines() == lines
