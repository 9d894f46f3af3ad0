"""What a migration carries besides an export's records, on every backend: tokens with their
revocation state, curation counters and deferred nominations, each moved by public key and
each safe to move twice (a resumed migration)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from memwal_mcp.store import Store, StoreWriter

from .helpers import T0, everything, remember


async def test_tokens_move_with_their_revocation_and_are_never_unrevoked(
    make_store: Callable[[], Awaitable[Store]],
) -> None:
    source, target = await make_store(), await make_store()
    await source.write(lambda w: w.insert_token("sha256:aa01", "alice", ("read", "write"), "laptop"))
    await source.write(lambda w: w.insert_token("sha256:bb02", "bob", ("read",), None))
    assert await source.write(lambda w: w.revoke_token("sha256:bb02")) == ["sha256:bb02"]
    rows = await source.read(lambda r: r.list_tokens())

    assert await target.write(lambda w: w.import_tokens(rows)) == (2, 0)
    assert await target.read(lambda r: r.list_tokens()) == rows  # created_at and revoked_at kept
    assert await target.write(lambda w: w.import_tokens(rows)) == (0, 0)

    # Revoked in the source after the first move: the next one carries the revocation.
    assert await source.write(lambda w: w.revoke_token("sha256:aa01")) == ["sha256:aa01"]
    later = await source.read(lambda r: r.list_tokens())
    assert await target.write(lambda w: w.import_tokens(later)) == (0, 1)
    assert await target.read(lambda r: r.count_active_tokens()) == 0
    # An older list (alice's token still active in it) does not bring a revoked token back.
    assert await target.write(lambda w: w.import_tokens(rows)) == (0, 0)
    assert await target.read(lambda r: r.count_active_tokens()) == 0


async def test_counters_are_raised_to_the_sources_never_added_twice(
    make_store: Callable[[], Awaitable[Store]],
) -> None:
    target = await make_store()
    await target.write(lambda w: _bump(w, {"curation_created": 5, "curation_guard_skip_refused": 1}))
    await target.write(lambda w: w.merge_counters({"curation_created": 3, "curation_occurrence": 7}))
    await target.write(lambda w: w.merge_counters({"curation_created": 3, "curation_occurrence": 7}))
    counters = await target.read(lambda r: r.counters())
    assert counters == {"curation_created": 5, "curation_guard_skip_refused": 1, "curation_occurrence": 7}


def _bump(w: StoreWriter, counts: dict[str, int]) -> None:
    with w.transaction():
        w.bump_counters([marker for marker, n in counts.items() for _ in range(n)])


async def test_deferred_nominations_move_by_memory_id_to_live_memories_only(
    make_store: Callable[[], Awaitable[Store]],
) -> None:
    source, target = await make_store(), await make_store()

    def build(w: StoreWriter) -> list[str]:
        made = [remember(w, "alice", "default", f"Deferred fact {i}", at=T0 + i) for i in range(3)]
        with w.transaction():
            for memory in made:
                w.defer_nominations(memory.pk, memory.lane, memory.job.id)
        return [memory.id for memory in made]

    ids = await source.write(build)
    deferred = await source.read(lambda r: r.deferred_nomination_ids())
    assert [(owner, memory_id) for owner, memory_id, _ in deferred] == [("alice", i) for i in ids]

    exported = await source.read(everything)
    await target.write(lambda w: w.import_rows(enumerate(exported.rows(), start=1)))
    await target.write(lambda w: w.forget_memory("alice", ids[1]))
    assert await target.write(lambda w: w.import_deferred_nominations(deferred)) == 2  # not the forgotten one
    assert await target.write(lambda w: w.import_deferred_nominations(deferred)) == 0
    moved = await target.read(lambda r: r.deferred_nomination_ids())
    assert moved == [entry for entry in deferred if entry[1] != ids[1]]
    assert await target.read(lambda r: r.deferred_nomination_count()) == 2
