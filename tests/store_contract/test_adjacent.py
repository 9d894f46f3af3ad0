"""`adjacent`: a memory's neighbours in its lane by creation order -- what recall's context for
conversation turns reads. Only live memories of the same lane count."""

from __future__ import annotations

from memwal_mcp.store import Store, StoreWriter

from .helpers import T0, Stored, remember


async def test_neighbours_are_the_live_memories_of_the_same_lane_created_around_it(store: Store) -> None:
    def build(w: StoreWriter) -> dict[str, Stored]:
        made = {}
        for i, name in enumerate(["first", "second", "third", "fourth"]):
            made[name] = remember(w, "alice", "chat", f"turn {name}", at=T0 + i)
            # Interleaved: another namespace and another owner, created in between.
            made[f"other-{name}"] = remember(w, "alice", "notes", f"note {name}", at=T0 + i + 0.5)
            made[f"bob-{name}"] = remember(w, "bob", "chat", f"bob {name}", at=T0 + i + 0.25)
        return made

    made = await store.write(build)
    await store.write(lambda w: w.forget_memory("alice", made["third"].id))
    pks = [made[name].pk for name in ("first", "second", "fourth", "third")]
    found = await store.read(lambda r: r.adjacent(pks))

    def names(pk: int) -> tuple[str | None, str | None]:
        before, after = found[pk]
        return (before.body if before else None, after.body if after else None)

    assert names(made["first"].pk) == (None, "turn second")
    assert names(made["second"].pk) == ("turn first", "turn fourth")  # the forgotten one is skipped
    assert names(made["fourth"].pk) == ("turn second", None)
    assert made["third"].pk not in found  # not live: no answer
    assert (await store.read(lambda r: r.adjacent([]))) == {}


async def test_memories_sharing_one_timestamp_are_neighbours_in_the_order_they_were_stored(store: Store) -> None:
    """One bulk remember stores its facts with one `created_at`: their order is the order they
    were stored in, and the neighbours across the tie are the memories created before and after."""

    def build(w: StoreWriter) -> list[Stored]:
        made = [remember(w, "alice", "chat", "turn before", at=T0)]
        made += [remember(w, "alice", "chat", f"bulk {i}", at=T0 + 1) for i in range(5)]
        made.append(remember(w, "alice", "chat", "turn after", at=T0 + 2))
        return made

    made = await store.write(build)
    await store.write(lambda w: w.forget_memory("alice", made[3].id))  # "bulk 2": skipped
    found = await store.read(lambda r: r.adjacent([m.pk for m in made]))

    def names(stored: Stored) -> tuple[str | None, str | None]:
        before, after = found[stored.pk]
        return (before.body if before else None, after.body if after else None)

    assert [names(m) for m in made if m.pk in found] == [
        (None, "bulk 0"),
        ("turn before", "bulk 1"),
        ("bulk 0", "bulk 3"),
        ("bulk 1", "bulk 4"),
        ("bulk 3", "turn after"),
        ("bulk 4", None),
    ]
