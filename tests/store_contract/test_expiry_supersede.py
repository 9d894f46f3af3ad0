"""Expiry, supersede, bulk insert, analyze requests and the ids behind a collapse: what every
backend must do with them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np
import pytest

from memwal_mcp.errors import InvalidInput, NotFound
from memwal_mcp.normalize import norm_key
from memwal_mcp.records import ANALYZED, Job
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import JobRequest, KeyReused, SupersedeRefused, SupersedeUnknown, Undone

from .helpers import T0, Stored, curate_created, everything, lane_of, prepare_vectors, remember, unit_vectors


def _curate(w: StoreWriter, job_id: str, decision: str, memory: Stored, at: float) -> None:
    with w.transaction():
        if decision == "occurrence":
            w.add_occurrence(memory.pk, at)
        w.mark_done(job_id, decision, memory.id, at)


def _create(w: StoreWriter, job: Job, at: float) -> str:
    """Curate a filed job into a memory of its own, as the worker does: its memory id."""
    with w.transaction():
        return curate_created(w, job, at)


def _curated(w: StoreWriter, request: JobRequest, at: float) -> str:
    """Alice's request filed and curated into a memory of its own, as the worker creates one."""
    ((job, _),) = w.insert_jobs("alice", [request], at)
    return _create(w, job, at)


async def test_insert_jobs_files_all_in_order_or_nothing(store: Store) -> None:
    def file(w: StoreWriter) -> list[str]:
        filed = w.insert_jobs(
            "alice",
            [
                JobRequest("default", "First fact", "k1"),
                JobRequest("work", "Second fact", None, T0 - 10, T0 + 3600),
            ],
            T0,
        )
        assert [replayed for _, replayed in filed] == [False, False]
        (_, first), (job, _) = filed
        assert (job.namespace, job.occurred_at, job.expires_at) == ("work", T0 - 10, T0 + 3600)
        return [j.id for j, _ in filed]

    ids = await store.write(file)
    # The same key and request again: the same job, per item.
    again = await store.write(lambda w: w.insert_jobs("alice", [JobRequest("default", "First fact", "k1")], T0 + 1))
    assert [(j.id, replayed) for j, replayed in again] == [(ids[0], True)]

    # A key reused for another fact, or for another expiry, stores nothing of the call.
    for reused in (JobRequest("default", "Other fact", "k1"), JobRequest("default", "First fact", "k1", None, T0)):
        with pytest.raises(KeyReused) as raised:
            await store.write(lambda w: w.insert_jobs("alice", [JobRequest("default", "New", "k2"), reused], T0 + 2))
        assert raised.value.index == 1
    fresh = await store.write(lambda w: w.insert_jobs("alice", [JobRequest("default", "New", "k2")], T0 + 3))
    assert fresh[0][1] is False  # k2 was never stored by the refused calls


async def test_supersedes_must_name_live_memories_of_the_owner(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored, Stored]:
        return (
            remember(w, "alice", "default", "Alice's fact"),
            remember(w, "bob", "default", "Bob's fact", at=T0 + 1),
            remember(w, "alice", "default", "Forgotten fact", at=T0 + 2),
        )

    mine, theirs, gone = await store.write(build)
    await store.write(lambda w: w.forget_memory("alice", gone.id))
    for bad, error in ((theirs.id, NotFound), ("m_0000000000000000", NotFound), (gone.id, InvalidInput)):
        request = JobRequest("default", "A correction", "k", supersedes=(mine.id, bad))
        with pytest.raises(error, match=bad):
            await store.write(lambda w, r=request: w.insert_jobs("alice", [r], T0 + 3))
    queued = await store.read(lambda r: r.next_batch(mine.lane, 10, T0 + 10))
    assert queued == []


async def test_a_memory_a_queued_job_supersedes_is_refused_to_a_second_fact(store: Store) -> None:
    """Two facts superseding one memory: once the first is curated the memory is gone, and the
    second would be dropped unseen. It is refused when filed, naming the queued job, by index."""

    def build(w: StoreWriter) -> tuple[Stored, Stored, str]:
        old = remember(w, "alice", "default", "The API timeout is 30 s")
        other = remember(w, "alice", "default", "Deploys go out on Fridays", at=T0 + 1)
        ((first, _),) = w.insert_jobs(
            "alice", [JobRequest("default", "The API timeout is 42 s", "k1", supersedes=(old.id,))], T0 + 2
        )
        return old, other, first.id

    old, other, first = await store.write(build)
    said = f"supersedes names {old.id!r}, which is already being superseded by queued job {first}; nothing was stored"
    for requests, index in (
        ([JobRequest("default", "The API timeout is 60 s", supersedes=(old.id,))], 0),
        (
            [
                JobRequest("default", "An unrelated fact"),
                JobRequest("work", "The API timeout is 60 s", "k2", supersedes=(other.id, old.id)),
            ],
            1,
        ),
    ):
        with pytest.raises(SupersedeRefused) as raised:
            await store.write(lambda w, rs=requests: w.insert_jobs("alice", rs, T0 + 3))
        assert (str(raised.value), raised.value.index) == (said, index)
    jobs = (await store.read(everything)).jobs
    assert [j.id for j in jobs if j.status == "queued"] == [first]  # the refused calls stored nothing
    # A retry of the first (its key) is the same job, not a second supersede.
    again = await store.write(
        lambda w: w.insert_jobs(
            "alice", [JobRequest("default", "The API timeout is 42 s", "k1", supersedes=(old.id,))], T0 + 4
        )
    )
    assert [(j.id, replayed) for j, replayed in again] == [(first, True)]
    # Another memory is free to be superseded; another owner's fact cannot even see this one.
    ((free, _),) = await store.write(
        lambda w: w.insert_jobs(
            "alice", [JobRequest("default", "Deploys go out daily", supersedes=(other.id,))], T0 + 5
        )
    )
    assert free.supersedes == (other.id,)
    with pytest.raises(SupersedeUnknown, match=old.id):
        await store.write(lambda w: w.insert_jobs("bob", [JobRequest("default", "x", supersedes=(old.id,))], T0 + 6))


async def test_a_memory_no_longer_live_when_the_job_is_curated_is_named_on_the_job(store: Store) -> None:
    """A target superseded first by another fact (a replica that filed it at the same time; here
    an undo undone), or forgotten, while the job waited: the job supersedes what it still can and
    says what it could not, instead of dropping it unsaid."""

    def build(w: StoreWriter) -> tuple[Stored, Stored, str, str, Job]:
        contested = remember(w, "alice", "default", "Standup is at 9:00")
        erased = remember(w, "alice", "default", "Standup is in room 4", at=T0 + 1)
        kept = remember(w, "alice", "default", "Standup lasts 15 minutes", at=T0 + 2)
        ((rival, _),) = w.insert_jobs(
            "alice", [JobRequest("default", "Standup is at 9:30", supersedes=(contested.id,))], T0 + 3
        )
        rival_id = _create(w, rival, T0 + 3)
        w.undo_last_change("alice", rival_id)  # contested is live again ...
        ((job, _),) = w.insert_jobs(
            "alice",
            [JobRequest("default", "Standup is at 10:00", supersedes=(contested.id, erased.id, kept.id))],
            T0 + 4,
        )
        w.undo_last_change("alice", rival_id)  # ... and superseded by the rival again
        w.forget_memory("alice", erased.id)
        return contested, erased, kept.id, rival_id, job

    contested, erased, kept, rival, job = await store.write(build)
    new = await store.write(lambda w: _create(w, job, T0 + 5))
    done = (await store.read(lambda r: r.jobs_by_id("alice", [job.id])))[job.id]
    assert (done.status, done.decision, done.memory_id) == ("done", "created", new)
    assert done.error == f"not superseded: {contested.id} ({rival} superseded it first); {erased.id} (it was forgotten)"
    assert await store.read(lambda r: r.superseded_by("alice", new)) == [kept]
    assert await store.read(lambda r: r.superseded_by("alice", rival)) == [contested.id]


async def test_expiry_comes_from_the_job_and_a_repeat_extends_it(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        (job, _), (other, _) = w.insert_jobs(
            "alice",
            [JobRequest("default", "Sale ends Friday", expires_at=T0 + 100), JobRequest("default", "Kept forever")],
            T0,
        )
        lane = lane_of(w, "alice", "default")
        made = []
        for filed in (job, other):
            with w.transaction():
                pk, memory_id = w.create_memory(
                    owner="alice",
                    namespace="default",
                    lane=lane,
                    body=filed.text,
                    key=filed.text.lower(),
                    source_job_id=filed.id,
                    vector=None,
                    model_id=None,
                    now=T0,
                )
                w.mark_done(filed.id, "created", memory_id, T0)
            made.append(Stored(pk, memory_id, filed, lane))
        return made[0], made[1]

    sale, forever = await store.write(build)

    def listed(r: StoreReader, at: float | None) -> set[str]:  # both made at T0: in either order
        return {row.id for row in r.list_memories("alice", None, None, None, 10, at)}

    assert (await store.read(lambda r: r.memories_by_pk([sale.pk])))[sale.pk].expires_at == T0 + 100
    assert await store.read(lambda r: listed(r, T0 + 50)) == {forever.id, sale.id}
    assert await store.read(lambda r: listed(r, T0 + 100)) == {forever.id}  # expired at its instant
    assert await store.read(lambda r: listed(r, None)) == {forever.id, sale.id}
    assert await store.read(lambda r: r.expired_memories("alice", T0 + 100, 10)) == [sale.id]
    assert await store.read(lambda r: r.expired_memories("bob", T0 + 100, 10)) == []

    # Said again with a later end, it lasts until then; said again with none, it never ends.
    later = await store.write(
        lambda w: w.insert_jobs("alice", [JobRequest("default", "sale ends friday", expires_at=T0 + 500)], T0 + 1)
    )
    await store.write(_curate, later[0][0].id, "occurrence", sale, T0 + 1)
    assert await store.read(lambda r: r.expired_memories("alice", T0 + 400, 10)) == []
    endless = await store.write(lambda w: w.insert_jobs("alice", [JobRequest("default", "Sale ends Friday")], T0 + 2))
    await store.write(_curate, endless[0][0].id, "occurrence", sale, T0 + 2)
    assert (await store.read(lambda r: r.memories_by_pk([sale.pk])))[sale.pk].expires_at is None


async def test_a_superseded_memory_leaves_the_indexes_and_undo_brings_it_back(store: Store) -> None:
    vectors = unit_vectors(np.random.default_rng(5), 2)

    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        prepare_vectors(w)
        old = remember(w, "alice", "home", "User prefers dark roast coffee", vector=vectors[0])
        ((job, _),) = w.insert_jobs(
            "alice", [JobRequest("default", "User now prefers green tea", supersedes=(old.id,))], T0 + 1
        )
        assert job.supersedes == (old.id,)
        lane = lane_of(w, "alice", "default")
        with w.transaction():
            pk, memory_id = w.create_memory(
                owner="alice",
                namespace="default",
                lane=lane,
                body=job.text,
                key=job.text.lower(),
                source_job_id=job.id,
                vector=vectors[1],
                model_id="contract-test-model",
                now=T0 + 1,
            )
            w.mark_done(job.id, "created", memory_id, T0 + 1)
        return old, Stored(pk, memory_id, job, lane)

    old, new = await store.write(build)

    def superseded(r: StoreReader) -> None:
        assert r.memories_by_pk([old.pk, new.pk]).keys() == {new.pk}
        assert r.text_search([old.lane], ["coffee"], 10) == ([], True)
        assert old.pk not in {m.pk for m in r.vector_search(old.lane)(vectors[:1], 10)[0]}
        found = r.memory_by_id("alice", old.id)
        assert found is not None and found[1] == "superseded" and found[0].superseded_by == new.id
        assert found[0].body == "User prefers dark roast coffee"  # kept
        assert [row.id for row in r.superseded_in([old.lane], 10)] == [old.id]
        assert r.superseded_by("alice", new.id) == [old.id]
        assert r.superseded_by("bob", new.id) == []
        (revision,) = r.revisions(new.pk)
        assert (revision.decision, revision.merged_ids, revision.job_id) == ("superseded", (old.id,), new.job.id)
        assert [row.id for row in r.list_memories("alice", None, None, None, 10)] == [new.id]
        with_old = r.list_memories("alice", None, None, None, 10, superseded=True)
        assert [(row.id, row.superseded_by) for row in with_old] == [(new.id, None), (old.id, new.id)]

    await store.read(superseded)

    undone = await store.write(lambda w: w.undo_last_change("alice", new.id))
    assert undone == Undone("User now prefers green tea", restored=(old.id,))

    def back(r: StoreReader) -> None:
        assert r.memories_by_pk([old.pk]).keys() == {old.pk}
        assert [m.pk for m in r.text_search([old.lane], ["coffee"], 10)[0]] == [old.pk]
        found = r.memory_by_id("alice", old.id)
        assert found is not None and found[1] == "live" and found[0].superseded_by is None
        assert r.superseded_in([old.lane], 10) == []
        assert r.memories_by_pk([new.pk])[new.pk].body == "User now prefers green tea"

    await store.read(back)
    # Undoing the undo supersedes it again.
    assert await store.write(lambda w: w.undo_last_change("alice", new.id)) == Undone(
        "User now prefers green tea", superseded_again=(old.id,)
    )
    assert (await store.read(lambda r: r.memory_by_id("alice", old.id)))[1] == "superseded"  # type: ignore[index]
    # A superseded memory is forgotten on its own; the one that replaced it stays.
    done = await store.write(lambda w: w.forget_memory("alice", old.id))
    assert done.memory_ids == (old.id,)
    assert (await store.read(lambda r: r.memory_by_id("alice", new.id)))[1] == "live"  # type: ignore[index]


async def test_a_fact_that_repeats_the_memory_it_supersedes_does_not_retire_it(store: Store) -> None:
    def build(w: StoreWriter) -> Stored:
        old = remember(w, "alice", "default", "Timeout is 30 s")
        ((job, _),) = w.insert_jobs("alice", [JobRequest("default", "timeout is 30 s", supersedes=(old.id,))], T0 + 1)
        with w.transaction():
            w.add_occurrence(old.pk, T0 + 1)
            w.mark_done(job.id, "occurrence", old.id, T0 + 1)
        return old

    old = await store.write(build)
    assert (await store.read(lambda r: r.memory_by_id("alice", old.id)))[1] == "live"  # type: ignore[index]


async def test_an_analyze_request_keeps_the_source_and_its_facts_name_it(store: Store) -> None:
    source = "Alice: I moved to Berlin in May. Bob: nice! Alice: my Zyxwvut badge is 4417."
    request, filed = await store.write(
        lambda w: w.insert_analysis(
            "alice", "default", source, [JobRequest("default", "Alice moved to Berlin in May")], T0
        )
    )
    assert (request.status, request.decision, request.memory_id, request.text) == ("done", ANALYZED, None, source)
    ((fact, replayed),) = filed
    assert (fact.status, fact.source_job_id, replayed) == ("queued", request.id, False)
    jobs = await store.read(lambda r: r.jobs_by_id("alice", [request.id, fact.id]))
    assert jobs[request.id].text == source and jobs[fact.id].source_job_id == request.id
    lane = await store.read(lambda r: lane_of(r, "alice", "default"))
    assert [j.id for j in await store.read(lambda r: r.next_batch(lane, 10, T0 + 1))] == [fact.id]  # never curated
    # The facts a request holds, for the owner only: what forgetting the request leaves.
    assert [j.id for j in await store.read(lambda r: r.extracted_from("alice", request.id))] == [fact.id]
    assert await store.read(lambda r: r.extracted_from("bob", request.id)) == []

    await store.write(lambda w: w.forget_memory("alice", request.id))
    jobs = await store.read(lambda r: r.jobs_by_id("alice", [request.id, fact.id]))
    assert jobs[request.id].text == "" and jobs[request.id].decision == "forgotten"
    assert jobs[fact.id].text == "Alice moved to Berlin in May"
    assert all("zyxwvut" not in j.text.lower() for j in (await store.read(everything)).jobs)


async def test_export_and_import_carry_expiry_supersede_and_sources(
    make_store: Callable[[], Awaitable[Store]],
) -> None:
    source, target = await make_store(), await make_store()

    def build(w: StoreWriter) -> None:
        old = remember(w, "alice", "default", "Old address: Paris")
        request, ((fact, _),) = w.insert_analysis(
            "alice",
            "default",
            "We moved to Berlin",
            [JobRequest("default", "Alice lives in Berlin", expires_at=T0 + 999, supersedes=(old.id,))],
            T0 + 1,
        )
        lane = lane_of(w, "alice", "default")
        with w.transaction():
            _, memory_id = w.create_memory(
                owner="alice",
                namespace="default",
                lane=lane,
                body=fact.text,
                key=fact.text.lower(),
                source_job_id=fact.id,
                vector=None,
                model_id=None,
                now=T0 + 2,
            )
            w.mark_done(fact.id, "created", memory_id, T0 + 2)

    await source.write(build)
    exported = await source.read(everything)
    memories = {m.body: m for m in exported.memories}
    assert memories["Alice lives in Berlin"].expires_at == T0 + 999
    new_id = memories["Alice lives in Berlin"].id
    assert (memories["Old address: Paris"].status, memories["Old address: Paris"].superseded_by) == ("retired", new_id)
    assert any(j.source_job_id and j.supersedes for j in exported.jobs)

    await target.write(lambda w: w.import_rows(enumerate(exported.rows(), start=1)))
    assert await target.read(everything) == exported
    found = await target.read(lambda r: r.memory_by_id("alice", memories["Old address: Paris"].id))
    assert found is not None and found[1] == "superseded"


async def test_copies_by_key_names_the_memories_it_counts(store: Store) -> None:
    def build(w: StoreWriter) -> list[Stored]:
        return [
            remember(w, "alice", "default", "Standup is at 9:30", at=T0),
            remember(w, "alice", "default", "standup is at 9:30 ", at=T0 + 10),
            remember(w, "alice", "work", "Standup is at 9:30", at=T0 + 20),
            remember(w, "bob", "default", "Standup is at 9:30", at=T0 + 30),
        ]

    first, second, third, _ = await store.write(build)
    key = first.job.text.lower()
    lanes = [first.lane, third.lane]
    copies = await store.read(lambda r: r.copies_by_key(lanes, [norm_key(key)]))
    assert copies[norm_key(key)].ids == (first.id, second.id, third.id)  # not bob's
    windowed = await store.read(lambda r: r.copies_by_key(lanes, [norm_key(key)], T0 + 5, T0 + 25))
    assert windowed[norm_key(key)].ids == (second.id, third.id)


async def test_an_expired_memory_that_was_superseded_is_still_expired(store: Store) -> None:
    """`purge --expired` erases what expired_memories names: a superseded memory past its
    expiry must be among them, or its text outlives the purge."""

    def build(w: StoreWriter) -> tuple[str, str]:
        old = _curated(w, JobRequest("default", "Flash sale on espresso beans", expires_at=T0 + 50), T0)
        new = _curated(w, JobRequest("default", "The flash sale moved to Friday", supersedes=(old,)), T0 + 1)
        return old, new

    old, new = await store.write(build)
    assert (await store.read(lambda r: r.memory_by_id("alice", old)))[1] == "superseded"  # type: ignore[index]
    assert await store.read(lambda r: r.expired_memories("alice", T0 + 100, 10)) == [old]
    assert await store.read(lambda r: r.expired_memories("alice", T0 + 10, 10)) == []


async def test_copies_by_key_counts_only_the_copies_a_recall_could_show(store: Store) -> None:
    """Without include_expired a copy expired by then is no copy (nor are its repeats); a
    superseded copy is one only with include_superseded: a collapse counts what it could show."""
    fact = "The Qwzxplorf promo code is SAVE10"

    def build(w: StoreWriter) -> tuple[str, str, str]:
        ended = _curated(w, JobRequest("default", fact, expires_at=T0 + 50), T0)
        ((repeat, _),) = w.insert_jobs("alice", [JobRequest("default", fact, expires_at=T0 + 60)], T0 + 1)
        found = w.memory_by_id("alice", ended)
        assert found is not None
        with w.transaction():
            w.add_occurrence(found[0].pk, T0 + 1)
            w.mark_done(repeat.id, "occurrence", ended, T0 + 1)
        replaced = _curated(w, JobRequest("work", fact), T0 + 2)
        _curated(w, JobRequest("work", "The promo code changed", supersedes=(replaced,)), T0 + 3)
        current = _curated(w, JobRequest("default", fact), T0 + 4)
        return ended, replaced, current

    ended, replaced, current = await store.write(build)
    key = norm_key(fact)
    lanes = await store.read(lambda r: [lane.id for lane in r.owner_lanes("alice")])

    async def count(live_at: float | None, superseded: bool = False) -> tuple[int, int, tuple[str, ...]]:
        found = (await store.read(lambda r: r.copies_by_key(lanes, [key], None, None, live_at, superseded)))[key]
        return found.rows, found.occurrences, found.ids

    assert await count(None) == (2, 1, (ended, current))  # expired ones too: include_expired
    assert await count(T0 + 100) == (1, 0, (current,))
    assert await count(T0 + 55) == (2, 1, (ended, current))  # extended to T0 + 60 by the repeat
    assert await count(T0 + 100, superseded=True) == (2, 0, (replaced, current))
    assert await count(None, superseded=True) == (3, 1, (ended, replaced, current))
