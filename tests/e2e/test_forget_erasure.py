"""Forget leaves the text in no file: not the database, not `-wal` or `-shm`, not the full-text
index, not free pages -- while another server has the same file open, the moment forget
returns, and after the forgetting server is SIGKILLed.

Every file in the database's folder is read as bytes, so nothing depends on how SQLite lays
its pages out. Each test first checks that the text *is* in those files before the forget:
a check that could not see the text would pass for the wrong reason.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import MEMWAL, RawServer, base_env, mcp_stdio_session, tool_text
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.slow

WORD = "Qwzxplorf"  # porter stemming leaves it as it is, so the index would hold it verbatim
SECRET = f"Vault recovery phrase is kept in the grey {WORD} cabinet behind the boiler"
# Long enough to spill into overflow pages (the database's page size is 4096 bytes).
LONG_SECRET = f"{WORD} safe combination notes: " + " ".join(f"wheel{i} turns left then right" for i in range(600))
KEPT = "The office plant needs water on Mondays"


def _leaks(folder: Path, *needles: str) -> list[str]:
    """`file: needle` for every file under `folder` that holds a needle (compared case-folded)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes().lower()
        found += [f"{path.name}: {needle[:40]!r}" for needle in needles if needle.lower().encode() in data]
    return found


def _data(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), result
    return result["structuredContent"]


async def _server(env: dict[str, str], servers: list[RawServer]) -> RawServer:
    server = await RawServer.start(env)
    servers.append(server)
    await server.initialize()
    return server


async def test_forget_leaves_no_copy_in_any_file_while_another_server_has_it_open(tmp_path: Path, raw_servers):
    db = tmp_path / "data" / "memwal.db"
    env = base_env(tmp_path, db)
    forgetting = await _server(env, raw_servers)
    other = await _server(env, raw_servers)

    first = _data(await forgetting.call_tool("memwal_remember", {"text": SECRET, "wait_ms": 15000}))
    again = _data(await forgetting.call_tool("memwal_remember", {"text": "  " + SECRET.upper(), "wait_ms": 15000}))
    assert again["decision"] == "occurrence" and again["memory_id"] == first["memory_id"]
    long = _data(await forgetting.call_tool("memwal_remember", {"text": LONG_SECRET, "wait_ms": 15000}))
    _data(await forgetting.call_tool("memwal_remember", {"text": KEPT, "wait_ms": 15000}))
    # The other server reads the file too, so it holds it open (and its view of the WAL) from now on.
    seen = _data(await other.call_tool("memwal_recall", {"query": f"{WORD} cabinet", "limit": 5}))
    assert SECRET in [hit["text"] for hit in seen["hits"]]
    assert _leaks(db.parent, SECRET, WORD), "the check must see the text before the forget"

    erased = _data(await forgetting.call_tool("memwal_forget", {"memory_id": first["memory_id"]}))
    assert erased["erased_jobs"] == 2
    _data(await forgetting.call_tool("memwal_forget", {"memory_id": long["memory_id"]}))
    assert _leaks(db.parent, SECRET, LONG_SECRET[:60], WORD) == []

    await forgetting.kill()
    assert _leaks(db.parent, SECRET, LONG_SECRET[:60], WORD) == []
    # The other server goes on serving the same file, without the forgotten facts.
    found = _data(await other.call_tool("memwal_recall", {"query": f"{WORD} cabinet safe", "limit": 5}))
    assert [hit["text"] for hit in found["hits"]] == [KEPT] or all(WORD not in hit["text"] for hit in found["hits"])
    assert _leaks(db.parent, SECRET, WORD) == []


PEANUTS = [
    f"The user is allergic to peanuts ({WORD} clinic)",
    f"User has a peanut allergy, says the {WORD} clinic",
    f"The user has an allergy to peanuts per the {WORD} clinic",
]
# Every content word of the three sources is kept, so MergeGuard lets the CONSOLIDATE through.
MERGED = f"The user is allergic to peanuts: a peanut allergy, an allergy to peanuts, says the {WORD} clinic (per the clinic)."


async def test_forget_erases_revisions_and_merged_memories_from_every_file(tmp_path: Path, raw_servers):
    """A memory that a CONSOLIDATE made from three others (their bodies are revisions and
    retired memories now, their jobs point at it): forgetting it leaves none of them."""
    asked = []

    def script(request: dict) -> Reply:
        asked.append(request)
        shown = re.findall(r"^\[(C\d+)\]", request["messages"][1]["content"], re.M)
        if len(shown) < 2:
            return Reply("CREATE")
        return Reply(f"CONSOLIDATE {' '.join(shown)}\n---\n{MERGED}")

    db = tmp_path / "data" / "memwal.db"
    with ScriptedLLM(script) as llm:
        env = base_env(tmp_path, db, MEMWAL_LLM__BASE_URL=llm.base_url, MEMWAL_LLM__MODEL="scripted")
        forgetting = await _server(env, raw_servers)
        other = await _server(env, raw_servers)
        outcomes = [
            _data(await forgetting.call_tool("memwal_remember", {"text": text, "wait_ms": 20000})) for text in PEANUTS
        ]
        assert outcomes[-1]["decision"] == "consolidated", (outcomes, asked)
        merged_id = outcomes[-1]["memory_id"]
        history = _data(await other.call_tool("memwal_history", {"memory_id": merged_id}))
        assert history["revisions"] and history["merged_from"], history
        assert _leaks(db.parent, *PEANUTS, WORD)
        # One of the merged memories alone cannot be forgotten: its text lives on in the merged body.
        refused = await forgetting.call_tool("memwal_forget", {"memory_id": history["merged_from"][0]})
        assert refused.get("isError") and f"merged into {merged_id!r}" in _text(refused), refused

        erased = _data(await forgetting.call_tool("memwal_forget", {"memory_id": merged_id}))
        assert len(erased["erased_memories"]) == 2 and erased["erased_jobs"] == 3, erased
        assert _leaks(db.parent, *PEANUTS, MERGED, WORD) == []
        await forgetting.kill()
        assert _leaks(db.parent, *PEANUTS, MERGED, WORD) == []


async def test_forget_by_query_from_the_shell_erases_the_text_while_a_server_runs(tmp_path: Path, raw_servers):
    db = tmp_path / "data" / "memwal.db"
    env = base_env(tmp_path, db)

    async def cli(*args: str) -> str:
        done = await anyio.run_process([str(MEMWAL), *args], env=env, check=False)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode()

    server = await _server(env, raw_servers)
    await cli("remember", SECRET)
    await cli("remember", KEPT)
    seen = _data(await server.call_tool("memwal_recall", {"query": f"{WORD} cabinet", "limit": 5}))
    assert SECRET in [hit["text"] for hit in seen["hits"]]
    assert _leaks(db.parent, SECRET, WORD)

    out = await cli("forget", "--query", SECRET, "--limit", "1", "--yes")
    assert out.startswith("forgot m_"), out
    assert _leaks(db.parent, SECRET, WORD) == []
    await server.kill()
    assert _leaks(db.parent, SECRET, WORD) == []


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block.get("type") == "text")


async def test_a_key_whose_job_was_forgotten_files_the_new_text(tmp_path: Path, raw_servers):
    server = await _server(base_env(tmp_path, tmp_path / "data" / "memwal.db"), raw_servers)
    first = _data(
        await server.call_tool(
            "memwal_remember", {"text": "Dentist appointment on 2026-12-05", "idempotency_key": "k2", "wait_ms": 15000}
        )
    )
    _data(await server.call_tool("memwal_forget", {"memory_id": first["memory_id"]}))

    reply = await server.call_tool(
        "memwal_remember",
        {"text": "Dentist appointment moved to 2026-12-09", "idempotency_key": "k2", "wait_ms": 15000},
    )
    assert _text(reply).startswith("Remembered: "), _text(reply)
    moved = _data(reply)
    assert moved["replayed"] is False and moved["job_id"] != first["job_id"] and moved["decision"] == "created"
    found = _data(await server.call_tool("memwal_recall", {"query": "dentist appointment", "limit": 5}))
    assert [hit["text"] for hit in found["hits"]] == ["Dentist appointment moved to 2026-12-09"]
    # A live job keeps its key: other text under it is still refused.
    refused = await server.call_tool(
        "memwal_remember", {"text": "Dentist appointment on 2026-12-05", "idempotency_key": "k2"}
    )
    assert refused.get("isError") and "already used" in _text(refused), refused


async def test_a_repeat_sent_just_before_the_forget_does_not_come_back(tmp_path: Path, raw_servers):
    server = await _server(base_env(tmp_path, tmp_path / "data" / "memwal.db"), raw_servers)
    first = _data(await server.call_tool("memwal_remember", {"text": SECRET, "wait_ms": 15000}))
    repeat = _data(await server.call_tool("memwal_remember", {"text": SECRET}))  # queued, or folded already
    erased = _data(await server.call_tool("memwal_forget", {"memory_id": first["memory_id"]}))
    assert erased["erased_jobs"] == 2

    (job,) = _data(await server.call_tool("memwal_remember_status", {"job_ids": [repeat["job_id"]], "wait_ms": 15000}))[
        "jobs"
    ]
    assert job["status"] == "done" and job["decision"] == "forgotten", job
    found = _data(await server.call_tool("memwal_recall", {"query": f"{WORD} cabinet", "limit": 5}))
    assert all(WORD not in hit["text"] for hit in found["hits"]), found
    assert _data(await server.call_tool("memwal_list", {}))["memories"] == []


# A second process in the middle of a read, as a sqlite3 shell or a backup tool holds one: it
# prints "held" once its snapshot is taken and ends its transaction (printing "done", staying
# connected) at the first line on stdin. Its own process: closing any descriptor of a file drops
# every POSIX lock the process holds on it, so reading the files' bytes here would end the snapshot.
_HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT COUNT(*) FROM memories").fetchone()
print("held", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
print("done", flush=True)
sys.stdin.readline()
"""


class SnapshotReader:
    """A connection of another process holding a read snapshot: its transaction pins the pages it
    reads, so no checkpoint can overwrite them or empty the log meanwhile."""

    def __init__(self, db: Path) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._said() == "held"

    def _said(self) -> str:
        assert self._proc.stdout is not None
        return self._proc.stdout.readline().strip()

    def end_transaction(self) -> None:
        """Let go of the snapshot, but stay connected: an open connection alone changes nothing."""
        assert self._proc.stdin is not None
        self._proc.stdin.write("\n")
        self._proc.stdin.flush()
        assert self._said() == "done"

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()


def _holding(folder: Path, needle: str) -> list[str]:
    """Names of the files under `folder` whose bytes hold `needle`."""
    return sorted(path.name for path in folder.iterdir() if path.is_file() and needle.encode() in path.read_bytes())


async def _until_clean(folder: Path, *needles: str, within_s: float = 60) -> None:
    """Poll the files' bytes until no needle is left; a bound, not a timing claim."""
    with anyio.fail_after(within_s):
        while _leaks(folder, *needles):
            await anyio.sleep(0.1)


async def test_forget_says_when_a_reader_keeps_the_log_and_the_idle_server_empties_it_later(tmp_path: Path):
    """The reply must not claim every file is clean while one still holds the text, and must name
    each file that does; once the reader lets go, the server clears them on its own -- no further
    write, no tool call, no restart."""
    db = tmp_path / "data" / "memwal.db"
    env = base_env(tmp_path, db)
    async with mcp_stdio_session(env, tmp_path / "server.err") as (session, _):

        async def data(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, tool_text(result)
            assert result.structured_content is not None
            return tool_text(result), result.structured_content

        _, kept = await data("memwal_remember", {"text": KEPT, "wait_ms": 15000})
        # No reader: the log is emptied before the reply, and the reply says so.
        text, erased = await data("memwal_forget", {"memory_id": kept["memory_id"]})
        assert erased["wal_cleared"] is True and "Not yet" not in text, (text, erased)
        assert _leaks(db.parent, KEPT) == []

        _, first = await data("memwal_remember", {"text": SECRET, "wait_ms": 15000})
        assert _leaks(db.parent, SECRET), "the check must see the text before the forget"
        reader = SnapshotReader(db)
        try:
            text, erased = await data("memwal_forget", {"memory_id": first["memory_id"]})
            assert erased["wal_cleared"] is False, erased
            holding = _holding(db.parent, SECRET)
            assert holding, "the pinned pages are still there: nothing can remove them yet"
            assert "memwal.db-shm" not in holding, holding  # the -shm is an index, never row data
            assert (
                "Not yet from every file: the text is erased from the database's tables, but copies of it may "
                "remain in the database file memwal.db and in its write-ahead log memwal.db-wal while another "
                "connection (a reader holding an older snapshot) keeps its transaction open; once that "
                "transaction ends, the next complete checkpoint writes the erased pages over them and empties "
                "the log; memwal-mcp retries and does that as soon as it can."
            ) in text, text
            assert all(name in text for name in holding), (holding, text)
            # The text is gone from the tables, whatever the files hold.
            _, found = await data("memwal_recall", {"query": f"{WORD} cabinet", "limit": 5})
            assert all(WORD not in hit["text"] for hit in found["hits"]), found

            reader.end_transaction()
            await _until_clean(db.parent, SECRET, WORD)
        finally:
            reader.close()


async def _cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = await anyio.run_process([str(MEMWAL), *args], env=env, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_cli_forget_warns_and_exits_3_while_a_reader_keeps_the_log(tmp_path: Path):
    db = tmp_path / "data" / "memwal.db"
    env = base_env(tmp_path, db)

    async def remembered(text: str) -> str:
        code, out, err = await _cli(env, "remember", text, "--json")
        assert code == 0, err
        return str(json.loads(out)["memory_id"])

    kept = await remembered(KEPT)
    assert await _cli(env, "forget", kept) == (0, f"forgot {kept} (1 remember job erased)\n", "")

    secret = await remembered(SECRET)
    reader = SnapshotReader(db)
    try:
        code, out, err = await _cli(env, "forget", secret, "--json")
        assert code == 3, (code, out, err)
        assert json.loads(out)["wal_cleared"] is False, out
        assert (
            "warning: the text is erased from the database's tables, but copies of it may remain in the "
            "database file memwal.db and in its write-ahead log memwal.db-wal while another connection (a "
            "reader holding an older snapshot) keeps its transaction open; when it ends, run "
            f"`memwal-mcp forget {secret}` again to checkpoint them away"
        ) in err, err
        assert _leaks(db.parent, SECRET)
        # Forgetting again while the reader still holds its snapshot must not claim the files clean.
        code, out, err = await _cli(env, "forget", secret, "--json")
        assert code == 3 and json.loads(out)["already_forgotten"] is True, (code, out, err)
        assert json.loads(out)["wal_cleared"] is False, out
        reader.end_transaction()
        # As the warning says: the same forget again, now that the reader has let go, clears them.
        code, out, err = await _cli(env, "forget", secret, "--json")
        assert code == 0 and json.loads(out)["wal_cleared"] is True, (code, out, err)
        assert _leaks(db.parent, SECRET, WORD) == []
    finally:
        reader.close()


async def test_the_copies_a_reader_keeps_are_in_the_database_file_itself_not_only_the_wal(tmp_path: Path):
    """The attack that found the warning untrue: the text reached the database file in a checkpoint
    before the reader began (here: the last connection of `remember` closing), so the forget's clean
    pages wait in the -wal while the old ones stay in memwal.db. The warning names that file, and the
    forget after the reader ends leaves the text in none."""
    db = tmp_path / "data" / "memwal.db"
    env = base_env(tmp_path, db)
    code, out, err = await _cli(env, "remember", SECRET, "--json")
    assert code == 0, err
    secret = str(json.loads(out)["memory_id"])
    assert _holding(db.parent, SECRET) == ["memwal.db"]  # checkpointed into the file, the log empty

    reader = SnapshotReader(db)
    try:
        code, out, err = await _cli(env, "forget", secret)
        assert code == 3, (code, out, err)
        assert _holding(db.parent, SECRET) == ["memwal.db"], "the old pages stay where the reader reads them"
        assert _holding(db.parent, WORD.lower()) == ["memwal.db"]  # the full-text index's copy too
        warning = err.splitlines()[-1]
        assert "in the database file memwal.db and in its write-ahead log memwal.db-wal" in warning, err
        reader.end_transaction()
        code, out, err = await _cli(env, "forget", secret)
        assert code == 0, (code, out, err)
        assert _leaks(db.parent, SECRET, WORD) == []
    finally:
        reader.close()


async def test_the_tool_forgets_by_a_jobs_id_and_says_when_it_was_already_forgotten(tmp_path: Path, raw_servers):
    server = await _server(base_env(tmp_path, tmp_path / "data" / "memwal.db"), raw_servers)
    done = _data(await server.call_tool("memwal_remember", {"text": SECRET, "wait_ms": 15000}))
    reply = await server.call_tool("memwal_forget", {"memory_id": done["job_id"]})
    assert _text(reply).startswith(f"Forgot {done['memory_id']} (the memory remember job {done['job_id']} became"), (
        reply
    )
    assert _data(reply)["erased_memories"] == [done["memory_id"]] and _data(reply)["job_id"] == done["job_id"]
    assert _data(await server.call_tool("memwal_list", {}))["memories"] == []

    again = await server.call_tool("memwal_forget", {"memory_id": done["memory_id"]})
    assert _text(again) == f"{done['memory_id']} was already forgotten; nothing more was erased.", again
    assert _data(again)["already_forgotten"] is True and _data(again)["erased_jobs"] == 0
