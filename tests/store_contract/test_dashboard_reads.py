"""What the dashboard reads beyond the tools' own paths: journal_counts (its activity figures in
one GROUP BY) and list_memories with an `until`, and with only the expired or only the superseded."""

from __future__ import annotations

from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import JournalCount

from .helpers import T0, Stored, remember

DAY = 86400.0


async def test_journal_counts_groups_the_owners_jobs_by_status_decision_and_day(store: Store) -> None:
    first = T0 - 2 * DAY  # the window's first instant

    def build(w: StoreWriter) -> None:
        remember(w, "alice", "default", "before the window", at=first - 1)
        remember(w, "alice", "default", "on its first instant", at=first)
        remember(w, "alice", "work", "late on day 0", at=first + DAY - 1)
        remember(w, "alice", "default", "day 2, the first", at=first + 2 * DAY + 5)
        remember(w, "alice", "default", "day 2, the second", at=first + 2 * DAY + 6)
        w.insert_job("alice", "default", "still queued on day 1", None, first + DAY + 10)
        for n in range(3):
            remember(w, "bob", "default", f"bob's fact {n}", at=first + 10)

    await store.write(build)
    counts = await store.read(lambda r: r.journal_counts("alice", first))
    assert sorted(counts, key=lambda c: (c.status, c.day is not None, c.day or 0)) == [
        JournalCount("done", "created", None, 1),
        JournalCount("done", "created", 0, 2),
        JournalCount("done", "created", 2, 2),
        JournalCount("queued", None, 1, 1),
    ]
    assert await store.read(lambda r: r.journal_counts("nobody", first)) == []
    later = await store.read(lambda r: r.journal_counts("bob", first + DAY))
    assert later == [JournalCount("done", "created", None, 3)]


async def test_until_keeps_what_happened_up_to_then_with_its_repeats(store: Store) -> None:
    def build(w: StoreWriter) -> list[Stored]:
        old = remember(w, "alice", "default", "an old fact", at=T0)
        recent = remember(w, "alice", "default", "a recent fact", at=T0 + 100)
        early = remember(w, "alice", "default", "remembered late, happened early", at=T0 + 200, occurred_at=T0 - 50)
        job, _ = w.insert_job("alice", "default", "A recent fact", None, T0 + 300)
        with w.transaction():  # repeated later: in a window around its repeat too
            w.add_occurrence(recent.pk, T0 + 300)
            w.mark_done(job.id, "occurrence", recent.id, T0 + 300)
        return [old, recent, early]

    old, recent, early = await store.write(build)

    async def listed(since: float | None, until: float | None) -> list[str]:
        rows = await store.read(lambda r: r.list_memories("alice", None, None, since, 10, until=until))
        return [row.id for row in rows]

    assert await listed(None, T0 + 50) == [early.id, old.id]
    assert await listed(T0 + 50, T0 + 150) == [recent.id]
    assert await listed(T0 + 250, T0 + 350) == [recent.id]  # by its repeat
    assert await listed(T0 - 60, T0 - 40) == [early.id]
    assert await listed(T0 + 400, None) == []


async def test_only_the_expired_or_only_the_superseded(store: Store) -> None:
    def build(w: StoreWriter) -> dict[str, str]:
        live = remember(w, "alice", "default", "a live fact", at=T0)
        gone = remember(w, "alice", "default", "an expired fact", at=T0 + 1, expires_at=T0 + 10)
        old = remember(w, "alice", "default", "the old address", at=T0 + 2)
        new = remember(w, "alice", "default", "the new address", at=T0 + 3, supersedes=[old.id])
        stale = remember(w, "alice", "default", "an old price", at=T0 + 4, expires_at=T0 + 10)
        remember(w, "alice", "default", "the new price", at=T0 + 5, supersedes=[stale.id])
        remember(w, "bob", "default", "bob's expired fact", at=T0, expires_at=T0 + 10)
        return {"live": live.id, "gone": gone.id, "old": old.id, "new": new.id, "stale": stale.id}

    ids = await store.write(build)
    now = T0 + 100

    async def listed(**how: object) -> set[str]:
        rows = await store.read(lambda r: r.list_memories("alice", None, None, None, 10, **how))  # type: ignore[arg-type]
        return {row.id for row in rows}

    assert await listed(expired_by=now) == {ids["gone"]}
    assert await listed(superseded_only=True) == {ids["old"], ids["stale"]}
    assert await listed(superseded_only=True, live_at=now) == {ids["old"]}
    assert await listed(superseded_only=True, expired_by=now) == {ids["stale"]}
    assert await listed(superseded=True, expired_by=now) == {ids["gone"], ids["stale"]}
    assert ids["new"] in await listed(live_at=now)
