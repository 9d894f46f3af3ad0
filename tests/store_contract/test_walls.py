"""Owners are walls, and a lane-scoped call stays in its lanes: no read shows another owner's
rows, no lane-scoped read another namespace's, no write reaches across."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from memwal_mcp.errors import NotFound
from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import QueuedText

from .helpers import T0, Stored, owner_totals, prepare_vectors, remember, unit_vectors

TEXT = "The staging database password rotates every Monday"
QUEUED = "Badger sightings near the north gate"


@dataclass(frozen=True)
class World:
    """The same fact, with the same vector, in alice/work, alice/home and bob/work; a queued job
    of the same text in each of those lanes too."""

    vector: np.ndarray
    alice_work: Stored
    alice_home: Stored
    bob_work: Stored
    queued: dict[str, str]  # lane name -> queued job id


@pytest.fixture
async def world(store: Store) -> World:
    (vector,) = unit_vectors(np.random.default_rng(7), 1)

    def build(w: StoreWriter) -> World:
        prepare_vectors(w)
        made = {
            name: remember(w, owner, namespace, TEXT, vector=vector, at=T0 + i)
            for i, (name, owner, namespace) in enumerate(
                [("alice_work", "alice", "work"), ("alice_home", "alice", "home"), ("bob_work", "bob", "work")]
            )
        }
        queued = {
            name: w.insert_job(owner, namespace, QUEUED, None, T0 + 10)[0].id
            for name, owner, namespace in [
                ("alice_work", "alice", "work"),
                ("alice_home", "alice", "home"),
                ("bob_work", "bob", "work"),
            ]
        }
        return World(vector, queued=queued, **made)

    return await store.write(build)


def _alice_lanes(r: StoreReader) -> list[int]:
    return [lane.id for lane in r.owner_lanes("alice")]


async def test_lanes_belong_to_their_owner(store: Store, world: World) -> None:
    lanes = await store.read(lambda r: r.owner_lanes("alice"))
    assert {(lane.owner, lane.namespace) for lane in lanes} == {("alice", "work"), ("alice", "home")}
    assert {lane.id for lane in lanes} == {world.alice_work.lane, world.alice_home.lane}
    assert world.bob_work.lane not in {lane.id for lane in lanes}
    assert await store.read(lambda r: r.owner_lanes("carol")) == []


async def test_memories_by_id_and_by_key_stay_with_their_owner(store: Store, world: World) -> None:
    assert await store.read(lambda r: r.memory_by_id("bob", world.alice_work.id)) is None
    found = await store.read(lambda r: r.memory_by_id("alice", world.alice_work.id))
    assert found is not None and found[0].owner == "alice" and found[1] == "live"
    key = norm_key(TEXT)
    by_key = await store.read(lambda r: r.live_by_norm_key(world.alice_work.lane, key))
    assert [(pk, memory_id) for pk, memory_id, _ in by_key] == [(world.alice_work.pk, world.alice_work.id)]
    assert await store.read(lambda r: r.live_norm_keys(world.alice_home.lane, [key, "absent"])) == {key}


async def test_jobs_stay_with_their_owner(store: Store, world: World) -> None:
    alice_jobs = [world.alice_work.job.id, world.queued["alice_work"]]
    assert await store.read(lambda r: r.jobs_by_id("bob", alice_jobs)) == {}
    assert set(await store.read(lambda r: r.jobs_by_id("alice", alice_jobs))) == set(alice_jobs)
    assert await store.read(lambda r: r.jobs_for_memories("bob", [world.alice_work.id])) == []
    mine = await store.read(lambda r: r.jobs_for_memories("alice", [world.alice_work.id]))
    assert [job.id for job in mine] == [world.alice_work.job.id]


async def test_queued_jobs_stay_in_their_lanes(store: Store, world: World) -> None:
    lane = world.alice_work.lane
    assert [job.id for job in await store.read(lambda r: r.next_batch(lane, 10, T0 + 11))] == [
        world.queued["alice_work"]
    ]
    fair = await store.read(lambda r: r.queued_fairly(_alice_lanes(r), 10**6, 100))
    assert {job.id for job in fair} == {world.queued["alice_work"], world.queued["alice_home"]}
    mark = await store.read(lambda r: r.queued_mark([world.bob_work.lane]))
    assert mark is not None
    await store.write(lambda w: w.mark_done(world.queued["bob_work"], "created", world.bob_work.id, T0 + 12))
    # bob's queue drained; alice's jobs, queued at the same time, do not count for his lane.
    assert not await store.read(lambda r: r.queued_through([world.bob_work.lane], mark))


async def test_text_search_stays_in_the_searched_lanes(store: Store, world: World) -> None:
    everywhere, _ = await store.read(lambda r: r.text_search(_alice_lanes(r), ["password"], 10))
    assert {m.pk for m in everywhere} == {world.alice_work.pk, world.alice_home.pk}
    home, _ = await store.read(lambda r: r.text_search([world.alice_home.lane], ["password"], 10))
    assert [m.pk for m in home] == [world.alice_home.pk]
    bobs, _ = await store.read(lambda r: r.text_search([world.bob_work.lane], ["password"], 10))
    assert [m.pk for m in bobs] == [world.bob_work.pk]
    strengths = await store.read(
        lambda r: r.text_strengths(_alice_lanes(r), ["password"], [world.alice_work.pk, world.bob_work.pk])
    )
    assert set(strengths) == {world.alice_work.pk}


async def test_another_owners_memories_never_move_a_strength(store: Store, world: World) -> None:
    before, _ = await store.read(lambda r: r.text_search(_alice_lanes(r), ["password", "monday"], 10))
    totals = await store.read(lambda r: owner_totals(r, "alice"))

    def crowd(w: StoreWriter) -> None:
        for i in range(20):
            remember(w, "bob", "work", f"password {i} for the Monday password reset", at=T0 + 100 + i)

    await store.write(crowd)
    after, _ = await store.read(lambda r: r.text_search(_alice_lanes(r), ["password", "monday"], 10))
    assert after == before
    assert await store.read(lambda r: owner_totals(r, "alice")) == totals == (2, 2 * len(TEXT))


async def test_vector_search_stays_in_its_lane(store: Store, world: World) -> None:
    query = world.vector[None, :]
    for stored in (world.alice_work, world.alice_home, world.bob_work):
        search = await store.read(lambda r: r.vector_search(stored.lane))
        ((match,),) = search(query, 10)
        assert match.pk == stored.pk and match.cosine == pytest.approx(1.0, abs=1e-5)
    others = [world.alice_home.pk, world.bob_work.pk]
    assert await store.read(lambda r: r.cosines(world.alice_work.lane, world.vector, others)) == {}
    assert await store.read(lambda r: r.vectors_of(world.alice_work.lane, others)) == {}


async def test_copies_are_counted_and_listed_within_the_lanes_and_owner(store: Store, world: World) -> None:
    key = norm_key(TEXT)
    one = await store.read(lambda r: r.copies_by_key([world.alice_work.lane], [key]))
    assert one[key].rows == 1
    both = await store.read(lambda r: r.copies_by_key(_alice_lanes(r), [key]))
    assert both[key].rows == 2
    copies = await store.read(lambda r: r.copies_of("alice", _alice_lanes(r), [key]))
    assert {copy.id for copy in copies} == {world.alice_work.id, world.alice_home.id}
    assert all(copy.key == key and copy.text == TEXT for copy in copies)
    # Named with bob's lanes, alice's call still finds none of bob's rows.
    assert await store.read(lambda r: r.copies_of("alice", [world.bob_work.lane], [key])) == []
    queued = norm_key(QUEUED)
    queued_copies = await store.read(lambda r: r.copies_of("alice", [world.alice_home.lane], [queued]))
    assert [copy.id for copy in queued_copies] == [world.queued["alice_home"]]


async def test_a_repeat_dates_only_the_memory_it_was_recorded_on(store: Store, world: World) -> None:
    """The same text in three lanes; a repeat recorded on alice's home copy, dated later. It
    puts that one memory in a window after its own date, never the copies in the other lanes."""

    def repeat(w: StoreWriter) -> None:
        job, _ = w.insert_job("alice", "home", TEXT.upper(), None, T0 + 20, occurred_at=T0 + 100)
        with w.transaction():
            w.add_occurrence(world.alice_home.pk, T0 + 20)
            w.mark_done(job.id, "occurrence", world.alice_home.id, T0 + 20)

    await store.write(repeat)
    pks = [world.alice_work.pk, world.alice_home.pk, world.bob_work.pk]
    assert await store.read(lambda r: r.repeats_in_window(pks, T0 + 50, None)) == {world.alice_home.pk: T0 + 100}
    assert await store.read(lambda r: r.repeats_in_window(pks, None, T0 + 50)) == {}
    assert await store.read(lambda r: r.repeats_in_window(pks, T0 + 101, None)) == {}
    # Counting copies of the text is another question, and sees the repeat in its lane.
    key = norm_key(TEXT)
    counted = await store.read(lambda r: r.copies_by_key(_alice_lanes(r), [key], T0 + 50, None))
    assert (counted[key].rows, counted[key].occurrences) == (0, 1)


async def test_listing_and_export_stay_with_their_owner(store: Store, world: World) -> None:
    listed = await store.read(lambda r: r.list_memories("alice", None, None, None, 100))
    assert {row.id for row in listed} == {world.alice_work.id, world.alice_home.id}
    work = await store.read(lambda r: r.list_memories("alice", "work", None, None, 100))
    assert [row.id for row in work] == [world.alice_work.id]

    def export(r: StoreReader) -> list[str]:
        with r.snapshot():
            owners = {row.owner for row in r.iter_lanes("alice")}
            owners |= {row.owner for row in r.iter_jobs("alice")}
            owners |= {row.owner for row in r.iter_memories("alice")}
            return sorted(owners)

    assert await store.read(export) == ["alice"]
    assert await store.read(lambda r: r.exported_owners("alice")) == ["alice"]
    counts = await store.read(lambda r: r.export_counts("alice"))
    assert (counts["lane"], counts["job"], counts["memory"]) == (2, 4, 2)


async def test_forget_and_undo_cannot_reach_another_owner(store: Store, world: World) -> None:
    with pytest.raises(NotFound):
        await store.write(lambda w: w.forget_memory("bob", world.alice_work.id))
    with pytest.raises(NotFound):
        await store.write(lambda w: w.forget_memory("bob", world.queued["alice_work"]))
    with pytest.raises(NotFound):
        await store.write(lambda w: w.undo_last_change("bob", world.alice_work.id))
    assert set(await store.read(lambda r: r.memories_by_pk([world.alice_work.pk]))) == {world.alice_work.pk}
    assert await store.read(lambda r: r.still_queued([world.queued["alice_work"]])) == {world.queued["alice_work"]}


async def test_forget_erases_in_its_own_lane_only(store: Store, world: World) -> None:
    """The same text elsewhere is another fact: another owner's, or the owner's in another
    namespace (forget --query names each copy it means)."""
    done = await store.write(lambda w: w.forget_memory("alice", world.alice_work.id))
    assert done.memory_ids == (world.alice_work.id,)
    live = await store.read(lambda r: r.memories_by_pk([world.alice_work.pk, world.alice_home.pk, world.bob_work.pk]))
    assert set(live) == {world.alice_home.pk, world.bob_work.pk}
    assert all(row.body == TEXT for row in live.values())
    for stored in (world.alice_home, world.bob_work):
        ((match,),) = (await store.read(lambda r: r.vector_search(stored.lane)))(world.vector[None, :], 5)
        assert match.pk == stored.pk


async def test_queued_text_is_scored_against_its_owner_only(store: Store, world: World) -> None:
    texts = [QueuedText("Badger badger badger at the gate", world.alice_work.lane)]
    before = await store.read(lambda r: r.score_queued(_alice_lanes(r), ["badger"], texts, True))

    def crowd(w: StoreWriter) -> None:
        for i in range(10):
            remember(w, "bob", "work", f"badger number {i}", at=T0 + 200 + i)

    await store.write(crowd)
    after = await store.read(lambda r: r.score_queued(_alice_lanes(r), ["badger"], texts, True))
    assert after == before and before.strengths[0] is not None
