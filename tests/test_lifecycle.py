"""Forget, undo and list: erasing for real, undoing merges, paging through memories."""

from __future__ import annotations

import re

import pytest

from memwal_mcp.errors import InvalidInput, NotFound
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import fts
from memwal_mcp.store.sqlite.connection import connect
from tests.scripted_llm import Reply, ScriptedLLM

SECRET = "Vault recovery phrase is kept in the grey Zyxwvut cabinet"
SECRET_WORDS = [b"Zyxwvut", b"zyxwvut", b"recovery phrase"]


async def test_forget_erases_the_text_from_every_table_and_the_file(make_settings, embedder, tmp_path):
    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        first = (await svc.remember("local", SECRET, idempotency_key="k-secret", wait_ms=10000)).job
        await svc.remember("local", SECRET + "  ", wait_ms=10000)  # an occurrence of the same fact
        await svc.remember("local", "The office plant needs water on Mondays", wait_ms=10000)
        outcome = await svc.forget("local", first.memory_id)
        assert outcome.erased_jobs == 2

        assert all("Zyxwvut" not in h.text for h in (await svc.recall("local", "Zyxwvut cabinet", limit=5)).hits)
        assert [m.text for m in (await svc.list("local")).items] == ["The office plant needs water on Mondays"]
        history = await svc.history("local", first.memory_id)
        assert history.status == "forgotten" and history.body == "" and not history.revisions
        assert all(job.text == "" for job in history.jobs)
        # The erased jobs give up their idempotency keys (test_forget_races.py: the key files anew).
        assert all(job.idempotency_key is None for job in history.jobs)
        # Forgetting again erases nothing and says so, rather than repeating the first report.
        assert await svc.forget("local", first.memory_id) == outcome.__class__(first.memory_id, (), 0, already=True)

    conn = connect(settings.db_path)
    try:
        for name in fts.tables(conn).values():
            assert conn.execute(f"SELECT count(*) FROM {name} WHERE {name} MATCH 'zyxwvut'").fetchone() == (0,)
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if table.startswith("memory_vectors_"):  # sqlite-vec's internal chunk tables hold floats only
                continue
            for row in conn.execute(f'SELECT * FROM "{table}"').fetchall():
                assert not any(isinstance(v, str) and "Zyxwvut" in v for v in row), (table, row)
        tombstone = conn.execute("SELECT owner, jobs FROM forgotten WHERE memory_id = ?", (first.memory_id,)).fetchone()
        assert tombstone == ("local", 2)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    raw = (
        settings.db_path.read_bytes() + settings.db_path.with_name(settings.db_path.name + "-wal").read_bytes()
        if settings.db_path.with_name(settings.db_path.name + "-wal").exists()
        else settings.db_path.read_bytes()
    )
    for word in SECRET_WORDS:
        assert word not in raw, word


async def test_forget_erases_the_words_from_a_full_text_table_made_without_secure_delete(make_settings, embedder):
    """A database whose full-text table was made by a SQLite before 3.44 (no secure-delete
    option) and is now opened by a newer one: forget still leaves no indexed word behind."""
    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        await svc.remember("local", "The office plant needs water on Mondays", wait_ms=10000)
        secret = (await svc.remember("local", SECRET, wait_ms=10000)).job
        conn = connect(settings.db_path)
        try:
            for name in fts.tables(conn).values():
                conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('secure-delete', 0)")
        finally:
            conn.close()
        await svc.forget("local", secret.memory_id)
        folder = settings.db_path.parent
        raw = b"".join(p.read_bytes() for p in folder.iterdir() if p.name.startswith(settings.db_path.name)).lower()
        assert b"zyxwvut" not in raw


async def test_forget_is_walled_off_by_owner(service: MemoryService):
    job = (await service.remember("alice", "Alice's locker code is 4417", wait_ms=10000)).job
    with pytest.raises(NotFound):
        await service.forget("bob", job.memory_id)
    assert (await service.recall("alice", "locker code", limit=1)).hits[0].text == "Alice's locker code is 4417"
    with pytest.raises(InvalidInput, match="^memory_id"):
        await service.forget("alice", "m_'; DROP TABLE memories; --")


async def test_undo_a_consolidation_brings_the_three_memories_back(make_settings, embedder):
    facts = ["The user is allergic to peanuts", "User has a peanut allergy", "The user has an allergy to peanuts"]
    merged = "The user is allergic to peanuts (a peanut allergy; an allergy to peanuts)."
    calls = []

    def script(request: dict) -> Reply:
        calls.append(request)
        if len(calls) < 3:
            return Reply("CREATE")
        shown = re.findall(r"^\[(C\d+)\]", request["messages"][1]["content"], re.M)
        return Reply(f"CONSOLIDATE {' '.join(shown)}\n---\n{merged}")

    with ScriptedLLM(script) as llm:
        settings = make_settings(llm={"base_url": llm.base_url, "model": "scripted"})
        svc = MemoryService(settings, embedder=embedder)
        async with svc.running():
            jobs = [(await svc.remember("local", fact, wait_ms=15000)).job for fact in facts]
            last = (await svc.remember("local", "The user is allergic to peanuts.", wait_ms=15000)).job
            assert "[C3]" in llm.user_messages()[-1], "the proposal must nominate all three"
            assert last.decision == "consolidated"
            assert [m.text for m in (await svc.list("local")).items] == [merged]

            outcome = await svc.undo("local", last.memory_id)
            # The proposal the consolidation folded in comes back too, as its own memory.
            [proposal_job] = await svc.status("local", [last.id])
            assert proposal_job.decision == "created" and proposal_job.memory_id in outcome.restored
            assert sorted(outcome.restored) == sorted(
                {j.memory_id for j in jobs} - {last.memory_id} | {proposal_job.memory_id}
            )
            live = sorted(m.text for m in (await svc.list("local")).items)
            assert live == sorted([*facts, "The user is allergic to peanuts."])
            found = await svc.recall("local", "peanut allergy", limit=5)
            assert sorted(h.text for h in found.hits) == sorted([*facts, "The user is allergic to peanuts."])
            history = await svc.history("local", last.memory_id)
            assert [r.decision for r in history.revisions] == ["undone", "consolidated"]
            assert history.revisions[0].body == merged
            with pytest.raises(InvalidInput, match="no change to undo"):
                await svc.undo("local", outcome.restored[0])


async def test_list_pages_newest_first_without_gaps(service: MemoryService):
    for i in range(25):
        await service.remember("local", f"fact number {i}", namespace="a" if i % 2 else "b")
    await service.recall("local", "fact", namespace="*")  # lets the worker catch up
    seen: list[str] = []
    cursor = None
    while True:
        page = await service.list("local", cursor=cursor, limit=10)
        seen += [m.text for m in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"fact number {i}" for i in reversed(range(25))]
    only_a = await service.list("local", namespace="a", limit=100)
    assert len(only_a.items) == 12 and only_a.next_cursor is None
    assert (await service.list("someone-else")).items == []
    with pytest.raises(InvalidInput, match="^cursor"):
        await service.list("local", cursor="not-a-cursor")
