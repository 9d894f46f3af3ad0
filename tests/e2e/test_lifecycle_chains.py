"""Forget, purge and undo over supersede chains and LLM merges, as a client sees them (issue 19):
the real `mcp` client talking to `memwal-mcp` over stdio, the CLI as a subprocess, the scripted
OpenAI-compatible server as the curation model, on both backends.

A chain A <- B <- C is one current fact, C, whichever link is erased; an undo restores the exact
state it returns to (an expired fact stays expired); an undo that changes nothing says so and
exits non-zero.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, call_ok, mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

OPENVPN = "The office VPN is OpenVPN"
IPSEC = "The office VPN is IPsec"
WIREGUARD = "The office VPN is WireGuard"


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


async def _acli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI from the shell while a client's server keeps running (its session stays open, and
    must then answer from what the CLI changed): one server per test, not one per step."""
    return await anyio.to_thread.run_sync(lambda: _cli(env, *args))


async def _chain(session: Any, **middle: Any) -> tuple[str, str, str]:
    a = await call_ok(session, "memwal_remember", text=OPENVPN, wait_ms=20000)
    b = await call_ok(session, "memwal_remember", text=IPSEC, supersedes=[a["memory_id"]], wait_ms=20000, **middle)
    c = await call_ok(session, "memwal_remember", text=WIREGUARD, supersedes=[b["memory_id"]], wait_ms=20000)
    return a["memory_id"], b["memory_id"], c["memory_id"]


async def _one_current_fact(session: Any, a: str, c: str) -> None:
    found = await call_ok(session, "memwal_recall", query="office VPN", limit=10)
    assert [hit["id"] for hit in found["hits"]] == [c]
    assert [m["id"] for m in (await call_ok(session, "memwal_list"))["memories"]] == [c]
    history = await session.call_tool("memwal_history", {"memory_id": a})
    assert (history.structured_content["status"], history.structured_content["superseded_by"]) == ("superseded", c)
    assert f"memwal-mcp undo {c} brings it back" in tool_text(history)
    assert (await call_ok(session, "memwal_history", memory_id=c))["supersedes"] == [a]


async def test_forgetting_the_middle_of_a_chain_leaves_one_current_fact(server_env, tmp_path):
    env = server_env()
    with anyio.fail_after(300):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            a, b, c = await _chain(session)
            forgot = await call_ok(session, "memwal_forget", memory_id=b)
            assert forgot["live_again"] == []
            await _one_current_fact(session, a, c)
            # Undo of C now brings back what it replaces: A.
            undone = await _acli(env, "undo", c)
            assert undone.returncode == 0 and a in undone.stdout, undone.stderr
            found = await call_ok(session, "memwal_recall", query="office VPN", limit=10)
            assert sorted(hit["id"] for hit in found["hits"]) == sorted([a, c])


async def test_purging_an_expired_middle_of_a_chain_leaves_one_current_fact(server_env, tmp_path):
    env = server_env()
    with anyio.fail_after(300):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            a, b, c = await _chain(session, expires_at="2020-01-31")
            purged = await _acli(env, "purge", "--expired")
            assert purged.returncode == 0 and b in purged.stdout, purged.stderr
            assert (await call_ok(session, "memwal_history", memory_id=b))["status"] == "forgotten"
            await _one_current_fact(session, a, c)


async def test_an_undo_that_changes_nothing_says_why_and_exits_non_zero(server_env, tmp_path):
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            old = (await call_ok(session, "memwal_remember", text="Lunch is at noon", wait_ms=20000))["memory_id"]
            new = await call_ok(session, "memwal_remember", text="Lunch is at one", supersedes=[old], wait_ms=20000)
            await call_ok(session, "memwal_forget", memory_id=old)
    undone = _cli(env, "undo", new["memory_id"])
    assert undone.returncode != 0 and undone.stdout == ""
    assert undone.stderr == (
        f"memwal-mcp: error: nothing to undo for {new['memory_id']}: its last change superseded {old},"
        f" and since then {old} was forgotten; nothing was changed\n"
    )


BASE = "The staging API timeout is 30 s"
CORRECTION = "The staging API timeout is 30 s for uploads too"
MERGED = "The staging API timeout is 30 s, for uploads too"


async def test_undoing_a_merge_into_an_expired_fact_leaves_it_expired(server_env, tmp_path):
    def script(request: dict[str, Any]) -> Reply:
        return Reply(f"UPDATE C1\n---\n{MERGED}")

    with ScriptedLLM(script) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(360):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                old = await call_ok(session, "memwal_remember", text=BASE, expires_at="2020-01-31", wait_ms=20000)
                merged = await call_ok(session, "memwal_remember", text=CORRECTION, wait_ms=20000)
                assert (merged["decision"], merged["memory_id"]) == ("updated", old["memory_id"]), merged
                # Said again without an end, the merged fact is current.
                found = await call_ok(session, "memwal_recall", query="staging API timeout", limit=10)
                assert [(hit["id"], hit["expired"]) for hit in found["hits"]] == [(old["memory_id"], False)]
                undone = await _acli(env, "undo", old["memory_id"])
                assert undone.returncode == 0, undone.stderr
                history = await call_ok(session, "memwal_history", memory_id=old["memory_id"])
                assert history["body"] == BASE
                found = await call_ok(session, "memwal_recall", query="staging API timeout", limit=10)
                assert old["memory_id"] not in [hit["id"] for hit in found["hits"]]  # expired again
                shown = await call_ok(
                    session, "memwal_recall", query="staging API timeout", limit=10, include_expired=True
                )
                hits = {hit["id"]: hit for hit in shown["hits"]}
                assert hits[old["memory_id"]]["expired"] is True
                assert hits[old["memory_id"]]["expires_at"] == old["expires_at"]


FLIGHT = "Kai's flight is LH400 at 09:00"
GATE = "Kai's flight is LH400 at 09:00 from gate A1"
CORRECTED = "Kai's flight is LH999 at 11:00 from gate C3"


async def test_a_redo_of_a_merge_says_what_it_folds_in_and_refuses_a_corrected_fact(server_env, tmp_path):
    """Undo an LLM merge (the proposal X on its own again), redo it (X folded in again, said),
    undo once more, then correct X (Y supersedes it): undoing the merged memory again would bring
    back the body holding X's text beside Y. It exits 2 naming why, and recall keeps Y current."""

    def script(request: dict[str, Any]) -> Reply:
        return Reply(f"UPDATE C1\n---\n{GATE}")

    with ScriptedLLM(script) as llm:
        env = server_env(MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted", MEMWAL_LLM__TIMEOUT_S="5")
        with anyio.fail_after(480):
            async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
                m = (await call_ok(session, "memwal_remember", text=FLIGHT, wait_ms=20000))["memory_id"]
                merged = await call_ok(session, "memwal_remember", text=GATE, wait_ms=20000)
                assert (merged["decision"], merged["memory_id"]) == ("updated", m), merged
                undone = json.loads((await _acli(env, "undo", m, "--json")).stdout)
                (x,) = undone["restored"]
                redo = await _acli(env, "undo", m)
                assert redo.returncode == 0, redo.stderr
                assert redo.stdout == f"{m} is back to: {GATE}\nfolded in again (out of recall, merged into {m}): {x}\n"
                assert json.loads((await _acli(env, "undo", m, "--json")).stdout)["restored"] == [x]
                y = await call_ok(session, "memwal_remember", text=CORRECTED, supersedes=[x], wait_ms=20000)
                refused = await _acli(env, "undo", m)
                assert (refused.returncode, refused.stdout) == (2, "")
                assert refused.stderr == (
                    f"memwal-mcp: error: nothing to undo for {m}: its last change brought back {x}, and since then"
                    f" {x} was superseded by {y['memory_id']}; nothing was changed\n"
                )
                found = await call_ok(session, "memwal_recall", query="Kai flight", limit=10)
                assert sorted((hit["id"], hit["text"]) for hit in found["hits"]) == sorted(
                    [(m, FLIGHT), (y["memory_id"], CORRECTED)]
                )


async def test_a_redo_of_a_supersede_says_which_memory_it_replaced_again(server_env, tmp_path):
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            a = (await call_ok(session, "memwal_remember", text="Dave drives a Volvo", wait_ms=20000))["memory_id"]
            b = await call_ok(session, "memwal_remember", text="Dave drives a Tesla", supersedes=[a], wait_ms=20000)
    mb = b["memory_id"]
    undone = _cli(env, "undo", mb)
    assert undone.stdout == f"{mb} is back to: Dave drives a Tesla\nrestored: {a}\n", undone.stderr
    redo = _cli(env, "undo", mb, "--json")
    assert redo.returncode == 0, redo.stderr
    assert json.loads(redo.stdout) == {
        "memory_id": mb,
        "body": "Dave drives a Tesla",
        "restored": [],
        "superseded_again": [a],
        "folded_again": [],
    }
    again = _cli(env, "undo", mb)  # brings it back; and the redo once more, as text
    assert again.stdout == f"{mb} is back to: Dave drives a Tesla\nrestored: {a}\n"
    text = _cli(env, "undo", mb)
    assert text.stdout == (
        f"{a} superseded again by {mb}: {a} leaves recall; {mb} is unchanged: Dave drives a Tesla\n"
    ), text.stderr


async def test_forgetting_what_replaced_an_expired_fact_leaves_it_plainly_expired_and_says_so(server_env, tmp_path):
    """B superseded A, which has expired since; forgetting B does not bring A back live (it has
    expired), nor leaves it marked superseded by a memory that is gone: it is an expired memory,
    and the reply names it."""
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            a = await call_ok(
                session, "memwal_remember", text="Old hotel is Hilton", expires_at="2020-01-01", wait_ms=20000
            )
            a_id = a["memory_id"]
            b = await call_ok(
                session, "memwal_remember", text="New hotel is Marriott", supersedes=[a_id], wait_ms=20000
            )
            forgot = await session.call_tool("memwal_forget", {"memory_id": b["memory_id"]})
            out = forgot.structured_content or {}
            assert (out["live_again"], out["back_expired"]) == ([], [a_id]), out
            assert f"{a_id}, which it superseded, is no longer superseded but has expired" in tool_text(forgot)
            assert (await call_ok(session, "memwal_recall", query="hotel", limit=10))["hits"] == []
            shown = await session.call_tool(
                "memwal_recall", {"query": "hotel", "limit": 10, "include_expired": True, "include_superseded": True}
            )
            hits = (shown.structured_content or {})["hits"]
            assert [(h["id"], h["expired"], h["superseded_by"]) for h in hits] == [(a_id, True, None)], hits
            assert "superseded by" not in tool_text(shown)
            history = await session.call_tool("memwal_history", {"memory_id": a_id})
            assert (
                (history.structured_content or {})["status"],
                (history.structured_content or {})["superseded_by"],
            ) == ("live", None)
            assert "superseded by" not in tool_text(history)
    purged = _cli(env, "purge", "--expired")
    assert purged.returncode == 0 and a_id in purged.stdout, purged.stderr


@pytest.mark.parametrize("middle", [{}, {"expires_at": "2020-01-31"}], ids=["live-middle", "expired-middle"])
async def test_history_of_the_head_of_a_chain_says_what_replaced_its_replacement(server_env, tmp_path, middle):
    """A <- B <- C: A's history ends "superseded by B, itself superseded since by C", on the tool and the CLI,
    not mid-sentence at "superseded since"."""
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            a, b, c = await _chain(session, **middle)
            history = await session.call_tool("memwal_history", {"memory_id": a})
            assert history.structured_content["superseded_by_next"] == c
            assert f"superseded by {b}, itself superseded since by {c}\n" in tool_text(history) + "\n"
    shown = _cli(env, "history", a)
    assert shown.returncode == 0, shown.stderr
    assert f"superseded by {b}, itself superseded since by {c}\n" in shown.stdout
