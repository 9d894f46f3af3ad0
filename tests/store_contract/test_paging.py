"""list_memories pages through an owner's live memories newest first: a (created_at, id)
cursor, no duplicate and no gap across pages, even when memories arrive or go meanwhile."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import MemoryRow

from .helpers import T0, Stored, remember


def _fill(w: StoreWriter) -> list[Stored]:
    """23 memories in two namespaces; three at a time share a created_at, so the id orders them."""
    return [remember(w, "alice", "work" if i % 2 else "home", f"fact number {i}", at=T0 + i // 3) for i in range(23)]


def _newest_first(rows: list[Stored] | list[MemoryRow], created: dict[str, float]) -> list[str]:
    return sorted((row.id for row in rows), key=lambda memory_id: (created[memory_id], memory_id), reverse=True)


async def _pages(
    store: Store, namespace: str | None, size: int, between: Callable[[], Awaitable[None]] | None = None
) -> list[list[MemoryRow]]:
    """Every page, each asked with the last row of the one before as cursor; `between` runs after the first."""
    pages: list[list[MemoryRow]] = []
    before: tuple[float, str] | None = None
    while page := await store.read(lambda r: r.list_memories("alice", namespace, before, None, size)):
        assert len(page) <= size
        assert len(pages) < 100, "the cursor does not move on"
        pages.append(page)
        before = (page[-1].created_at, page[-1].id)
        if between is not None and len(pages) == 1:
            await between()
    return pages


async def test_pages_cover_every_memory_once_newest_first(store: Store) -> None:
    made = await store.write(_fill)
    created = {s.id: s.job.created_at for s in made}
    for size in (1, 4, 5, 23, 100):
        pages = await _pages(store, None, size)
        ids = [row.id for page in pages for row in page]
        assert ids == _newest_first(made, created)
        assert all(len(page) == size for page in pages[:-1])
    work = [row.id for page in await _pages(store, "work", 3) for row in page]
    assert work == _newest_first([s for s in made if s.job.namespace == "work"], created)


async def test_a_page_row_carries_the_memory(store: Store) -> None:
    made = await store.write(_fill)
    (row,) = await store.read(lambda r: r.list_memories("alice", "home", None, None, 1))
    newest = max((s for s in made if s.job.namespace == "home"), key=lambda s: (s.job.created_at, s.id))
    assert (row.id, row.pk, row.owner, row.namespace, row.body, row.lane) == (
        newest.id,
        newest.pk,
        "alice",
        "home",
        newest.job.text,
        newest.lane,
    )
    assert (row.created_at, row.occurrences) == (newest.job.created_at, 0)


async def test_paging_is_stable_while_memories_arrive_and_go(store: Store) -> None:
    made = await store.write(_fill)
    created = {s.id: s.job.created_at for s in made}
    expected = _newest_first(made, created)
    gone = expected[10]  # on a page not read yet

    async def meanwhile() -> None:
        await store.write(lambda w: remember(w, "alice", "home", "a newer fact", at=T0 + 1000))
        await store.write(lambda w: w.forget_memory("alice", gone))

    ids = [row.id for page in await _pages(store, None, 4, meanwhile) for row in page]
    assert ids == [memory_id for memory_id in expected if memory_id != gone]


async def test_since_keeps_what_happened_from_then_on(store: Store) -> None:
    def build(w: StoreWriter) -> list[Stored]:
        return [
            remember(w, "alice", "default", "an old fact", at=T0),
            remember(w, "alice", "default", "a recent fact", at=T0 + 100),
            remember(w, "alice", "default", "remembered late, happened early", at=T0 + 200, occurred_at=T0 - 50),
        ]

    old, recent, early = await store.write(build)
    since = await store.read(lambda r: r.list_memories("alice", None, None, T0 + 50, 10))
    assert [row.id for row in since] == [recent.id]
    everything = await store.read(lambda r: r.list_memories("alice", None, None, T0 - 50, 10))
    assert [row.id for row in everything] == [early.id, recent.id, old.id]
