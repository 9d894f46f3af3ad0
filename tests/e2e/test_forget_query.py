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

from tests.e2e.conftest import MEMWAL, base_env

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


class Cli:
    def __init__(self, tmp_path: Path, **extra: str) -> None:
        self.db = tmp_path / "data" / "memwal.db"
        self.env = base_env(tmp_path, self.db, **extra)

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
    for fact in FACTS:
        await cli.run("remember", fact)
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
    for _ in range(3):
        await cli.run("remember", fact)
    await cli.run("remember", "The garden hose is in the shed")
    planned = await cli.json("forget", "--query", "garage door code", "--limit", "1", "--dry-run")
    assert [item["text"] for item in planned["would_forget"]] == [fact] * 3
    assert len({item["id"] for item in planned["would_forget"]}) == 3
    await cli.run("forget", "--query", "garage door code", "--limit", "1", "--yes")
    assert await cli.texts() == ["The garden hose is in the shed"]
    hits = (await cli.json("recall", "garage door code"))["hits"]
    assert all("4417" not in hit["text"] for hit in hits), hits


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
