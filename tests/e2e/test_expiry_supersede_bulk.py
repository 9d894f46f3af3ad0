"""Expiry (and `purge --expired`), supersede and memwal_remember_many, as a client sees them: the
real `mcp` client talking to `memwal-mcp` over stdio, the CLI as a subprocess, real files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, call_ok, call_refused, db_rows, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

WORD = "Qwzxplorf"  # kept verbatim by the full-text index, so a leftover copy would be seen
EXPIRED = f"The {WORD} promo code is valid this week only"
KEPT = "The promo page lives at https://shop.example.com/promo"
CLI_EXPIRED = f"The {WORD} promo page moved to https://shop.example.com/deals for June"


def _leaks(folder: Path, *needles: str) -> list[str]:
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes().lower()
        found += [f"{path.name}: {needle[:40]!r}" for needle in needles if needle.lower().encode() in data]
    return found


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


async def test_an_expired_memory_leaves_recall_and_list_and_purge_erases_it_from_every_file(server_env, tmp_path):
    db = tmp_path / "data" / "memwal.db"
    env = server_env(MEMWAL_DB_PATH=str(db))
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            gone = await call_ok(session, "memwal_remember", text=EXPIRED, expires_at="2020-01-31", wait_ms=20000)
            kept = await call_ok(session, "memwal_remember", text=KEPT, expires_at="2999-12-31", wait_ms=20000)
            # A date alone is the end of that day: gone from the first instant of the next.
            assert gone["expires_at"] == "2020-02-01T00:00:00+00:00" and gone["status"] == "done"

            recalled = await call_ok(session, "memwal_recall", query="promo code this week", limit=10)
            assert [hit["id"] for hit in recalled["hits"]] == [kept["memory_id"]]
            listed = await call_ok(session, "memwal_list")
            assert [m["id"] for m in listed["memories"]] == [kept["memory_id"]]

            result = await session.call_tool(
                "memwal_recall", {"query": "promo code this week", "limit": 10, "include_expired": True}
            )
            hits = {hit["id"]: hit for hit in result.structured_content["hits"]}
            assert hits.keys() == {gone["memory_id"], kept["memory_id"]}
            assert hits[gone["memory_id"]]["expired"] and not hits[kept["memory_id"]]["expired"]
            text = tool_text(result)
            assert f"[expired 2020-01-31] {EXPIRED}" in text and f"[expires 2999-12-31] {KEPT}" in text
            listed = await call_ok(session, "memwal_list", include_expired=True)
            assert {m["id"]: m["expired"] for m in listed["memories"]} == {
                gone["memory_id"]: True,
                kept["memory_id"]: False,
            }

    # From a shell: --expires, and --supersedes (repeatable) naming the memory it replaces.
    cli = _cli(env, "remember", CLI_EXPIRED, "--expires", "2021-06-30", "--supersedes", kept["memory_id"], "--json")
    assert cli.returncode == 0, cli.stderr
    filed = json.loads(cli.stdout)
    assert filed["expires_at"] == "2021-07-01T00:00:00+00:00" and filed["supersedes"] == [kept["memory_id"]]
    assert db_rows(db, "SELECT superseded_by FROM memories WHERE id = ?", (kept["memory_id"],)) == [
        (filed["memory_id"],)
    ]
    assert _leaks(db.parent, WORD), "the check must see the text before the purge"
    dry = _cli(env, "purge", "--expired", "--dry-run")
    assert dry.returncode == 0 and gone["memory_id"] in dry.stdout and filed["memory_id"] in dry.stdout, dry
    assert _leaks(db.parent, WORD)
    done = _cli(env, "purge", "--expired")
    assert done.returncode == 0, done.stderr
    assert f"forgot {gone['memory_id']}" in done.stdout and f"forgot {filed['memory_id']}" in done.stdout
    assert f"{kept['memory_id']}, which it superseded, is live again" in done.stdout
    assert _leaks(db.parent, WORD, EXPIRED, CLI_EXPIRED) == []
    assert db_rows(db, "SELECT status FROM memories WHERE id = ?", (gone["memory_id"],)) == [("forgotten",)]
    assert sorted(db_rows(db, "SELECT memory_id FROM forgotten")) == sorted(
        [(gone["memory_id"],), (filed["memory_id"],)]
    )
    # What the purged memory superseded is live again, as an undo of the supersede would make it.
    assert db_rows(db, "SELECT status, superseded_by FROM memories WHERE id = ?", (kept["memory_id"],)) == [
        ("live", None)
    ]
    recalled = _cli(env, "recall", "promo page", "--json")
    assert kept["memory_id"] in [hit["id"] for hit in json.loads(recalled.stdout)["hits"]], recalled


async def test_supersede_hides_the_old_fact_links_history_and_undo_restores_it(server_env, tmp_path):
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            theirs_env = server_env(MEMWAL_OWNER="bob")
            old = await call_ok(session, "memwal_remember", text="User prefers dark roast coffee", wait_ms=20000)
            new = await call_ok(
                session,
                "memwal_remember",
                text="User switched from coffee to green tea",
                supersedes=[old["memory_id"]],
                wait_ms=20000,
            )
            assert new["supersedes"] == [old["memory_id"]]
            found = await call_ok(session, "memwal_recall", query="coffee", limit=10)
            assert [hit["id"] for hit in found["hits"]] == [new["memory_id"]]
            shown = await session.call_tool(
                "memwal_recall", {"query": "coffee", "limit": 10, "include_superseded": True}
            )
            marks = {hit["id"]: hit["superseded_by"] for hit in shown.structured_content["hits"]}
            assert marks == {new["memory_id"]: None, old["memory_id"]: new["memory_id"]}
            assert f"[superseded by {new['memory_id']}]" in tool_text(shown)

            old_history = await call_ok(session, "memwal_history", memory_id=old["memory_id"])
            assert (old_history["status"], old_history["superseded_by"]) == ("superseded", new["memory_id"])
            new_history = await call_ok(session, "memwal_history", memory_id=new["memory_id"])
            assert new_history["supersedes"] == [old["memory_id"]]
            assert new_history["revisions"][0]["replaced_by"] == "superseded"

    undo = _cli(env, "undo", new["memory_id"])
    assert undo.returncode == 0, undo.stderr
    assert old["memory_id"] in undo.stdout
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            found = await call_ok(session, "memwal_recall", query="dark roast coffee", limit=10)
            assert old["memory_id"] in [hit["id"] for hit in found["hits"]]
            assert (await call_ok(session, "memwal_history", memory_id=old["memory_id"]))["status"] == "live"

        # Another owner's id, or an unknown one, is refused by name and nothing is stored.
        async with mcp_stdio_session(theirs_env, tmp_path / "stderr-bob.log") as (bob, _):
            before = await call_ok(bob, "memwal_list")
            for foreign in (old["memory_id"], "m_0000000000000000"):
                message = await call_refused(bob, "memwal_remember", text="Bob's correction", supersedes=[foreign])
                assert foreign in message and "nothing was stored" in message
            assert await call_ok(bob, "memwal_list") == before
            assert db_rows(env_db(env), "SELECT COUNT(*) FROM remember_jobs WHERE owner = 'bob'") == [(0,)]


def _tables_holding(db: Path, needle: str) -> list[str]:
    """Every table of the database with a row holding the needle in any column (case-folded)."""
    tables = [name for (name,) in db_rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [
        t for t in tables if any(needle.lower() in repr(row).lower() for row in db_rows(db, f'SELECT * FROM "{t}"'))
    ]


async def test_forgetting_the_replacement_brings_the_old_fact_back_to_recall(server_env, tmp_path):
    db = tmp_path / "data" / "memwal.db"
    env = server_env(MEMWAL_DB_PATH=str(db))
    replacement = f"User switched from coffee to {WORD} green tea"
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            old = await call_ok(session, "memwal_remember", text="User prefers dark roast coffee", wait_ms=20000)
            new = await call_ok(
                session, "memwal_remember", text=replacement, supersedes=[old["memory_id"]], wait_ms=20000
            )
            found = await call_ok(session, "memwal_recall", query="dark roast coffee", limit=10)
            assert [hit["id"] for hit in found["hits"]] == [new["memory_id"]]
            assert _leaks(db.parent, WORD) and _tables_holding(db, WORD), "the checks must see the text first"

            result = await session.call_tool("memwal_forget", {"memory_id": new["memory_id"]})
            assert not result.is_error, tool_text(result)
            assert result.structured_content["live_again"] == [old["memory_id"]]
            assert f"{old['memory_id']}, which it superseded, is live again" in tool_text(result)

            found = await call_ok(session, "memwal_recall", query="dark roast coffee", limit=10)
            assert [hit["id"] for hit in found["hits"]] == [old["memory_id"]]
            assert [m["id"] for m in (await call_ok(session, "memwal_list"))["memories"]] == [old["memory_id"]]
            history = await session.call_tool("memwal_history", {"memory_id": old["memory_id"]})
            assert history.structured_content["status"] == "live" and "undo" not in tool_text(history)
            assert _leaks(db.parent, WORD, replacement) == []
    assert _tables_holding(db, WORD) == []
    assert _leaks(db.parent, WORD, replacement) == []


def env_db(env: dict[str, str]) -> Path:
    return Path(env["MEMWAL_DB_PATH"])


async def test_remember_many_takes_100_facts_in_one_call_refuses_a_bad_one_and_replays_keys(server_env, tmp_path):
    env = server_env()
    items = [{"text": f"Host h{i:03d} runs kernel 6.{i}", "idempotency_key": f"host-{i}"} for i in range(100)]
    with anyio.fail_after(240):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            bad = [*items[:40], {"text": "Host h999 runs", "occurred_at": "yesterday"}, *items[41:]]
            message = await call_refused(session, "memwal_remember_many", items=bad)
            assert "items[40]" in message and "occurred_at" in message and "\n" not in message
            unknown = await call_refused(
                session, "memwal_remember_many", items=[*items[:3], {"text": "x", "colour": 1}]
            )
            assert "items[3].colour" in unknown
            assert db_rows(env_db(env), "SELECT COUNT(*) FROM remember_jobs") == [(0,)]

            first = await call_ok(session, "memwal_remember_many", items=items, wait_ms=30000)
            assert len(first["jobs"]) == 100
            assert [job["job_id"] for job in first["jobs"]] == [
                row[0] for row in db_rows(env_db(env), "SELECT id FROM remember_jobs ORDER BY seq")
            ]
            assert not any(job["replayed"] for job in first["jobs"])
            again = await call_ok(session, "memwal_remember_many", items=items)
            assert [job["job_id"] for job in again["jobs"]] == [job["job_id"] for job in first["jobs"]]
            assert all(job["replayed"] for job in again["jobs"])
            assert db_rows(env_db(env), "SELECT COUNT(*) FROM remember_jobs") == [(100,)]

            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            schema = tools["memwal_remember_many"].input_schema
            assert schema["additionalProperties"] is False and "items" in schema["required"]
