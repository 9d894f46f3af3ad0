"""Forget erases a fact's text from everything the store answers with, keeps a tombstone and
frees its keys; undo gives a memory back the body it had before its last change."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memwal_mcp.errors import InvalidInput
from memwal_mcp.normalize import norm_key
from memwal_mcp.records import Job
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import Forgotten, JobWithdrawn, Undone

from .helpers import T0, Stored, everything, owner_totals, prepare_vectors, remember, unit_vectors

SECRET = "Vault code for the ZYXWVUT cabinet is 4417"
OTHER = "The office plant needs water on Mondays"


def _holds_secret(record: object) -> bool:
    return any(
        isinstance(value, str) and "zyxwvut" in value.lower()
        for value in (getattr(record, field.name) for field in dataclasses.fields(record))  # type: ignore[arg-type]
    )


async def test_forget_erases_the_text_from_every_answer(store: Store) -> None:
    vectors = unit_vectors(np.random.default_rng(3), 2)

    def build(w: StoreWriter) -> tuple[Stored, Stored, Job, Job, Job]:
        prepare_vectors(w)
        secret = remember(w, "alice", "default", SECRET, vector=vectors[0], key="k-secret")
        other = remember(w, "alice", "default", OTHER, vector=vectors[1], at=T0 + 1)
        repeat, _ = w.insert_job("alice", "default", SECRET.upper() + "  ", None, T0 + 2)  # an exact repeat
        with w.transaction():
            w.add_occurrence(secret.pk, T0 + 2)
            w.mark_done(repeat.id, "occurrence", secret.id, T0 + 2)
        queued, _ = w.insert_job("alice", "default", "  vault code for the zyxwvut cabinet is 4417", None, T0 + 3)
        elsewhere, _ = w.insert_job("alice", "attic", SECRET, None, T0 + 3)  # another namespace: another fact
        return secret, other, repeat, queued, elsewhere

    secret, other, repeat, queued, elsewhere = await store.write(build)
    (queued_seen,) = await store.read(lambda r: r.next_batch(secret.lane, 10, T0 + 4))  # a worker read it already
    chars_before = (await store.read(lambda r: owner_totals(r, "alice")))[1]

    done = await store.write(lambda w: w.forget_memory("alice", secret.id))
    assert done == Forgotten((secret.id,), 3, wal_cleared=True)

    def check(r: StoreReader) -> None:
        assert set(r.memories_by_pk([secret.pk, other.pk])) == {other.pk}
        found = r.memory_by_id("alice", secret.id)
        assert found is not None and found[1] == "forgotten" and found[0].body == ""
        assert r.text_search([secret.lane], ["zyxwvut", "vault", "cabinet"], 10) == ([], True)
        assert secret.pk not in {m.pk for m in r.vector_search(secret.lane)(vectors[:1], 10)[0]}
        assert r.cosines(secret.lane, vectors[0], [secret.pk]) == {}
        assert r.live_by_norm_key(secret.lane, norm_key(SECRET)) == []
        assert r.copies_of("alice", [secret.lane], [norm_key(SECRET)]) == []
        assert owner_totals(r, "alice") == (1, chars_before - len(SECRET))
        assert r.revisions(secret.pk) == []

    await store.read(check)
    jobs = await store.read(lambda r: r.jobs_by_id("alice", [secret.job.id, repeat.id, queued.id, elsewhere.id]))
    for job_id in (secret.job.id, repeat.id, queued.id):
        assert jobs[job_id].text == "" and jobs[job_id].idempotency_key is None and jobs[job_id].status != "queued"
    assert jobs[elsewhere.id].text == SECRET and jobs[elsewhere.id].status == "queued"
    assert await store.read(lambda r: r.next_batch(secret.lane, 10, T0 + 5)) == []
    # The worker that had read the queued repeat cannot curate it back.
    with pytest.raises(JobWithdrawn):
        await store.write(lambda w: w.mark_done(queued_seen.id, "created", other.id, T0 + 5))

    exported = await store.read(everything, "alice")
    assert [m.id for m in exported.memories] == [other.id]
    assert not any(_holds_secret(row) for row in exported.rows() if row != jobs[elsewhere.id])
    (tombstone,) = exported.tombstones
    assert (tombstone.memory_id, tombstone.owner, tombstone.namespace, tombstone.jobs) == (
        secret.id,
        "alice",
        "default",
        3,
    )
    assert tombstone.source_job_id == secret.job.id and tombstone.created_at == T0


async def test_a_second_forget_says_already_and_erases_nothing(store: Store) -> None:
    secret = await store.write(remember, "alice", "default", SECRET)
    await store.write(lambda w: w.forget_memory("alice", secret.id))
    later, _ = await store.write(lambda w: w.insert_job("alice", "default", SECRET, None, T0 + 9))
    again = await store.write(lambda w: w.forget_memory("alice", secret.id))
    assert again.already and again.memory_ids == () and again.jobs == 0
    assert len(await store.read(lambda r: list(r.iter_tombstones("alice")))) == 1
    # Filed after the forget, the same text is a new fact: the second forget leaves it alone.
    assert await store.read(lambda r: r.still_queued([later.id])) == {later.id}


async def test_forget_frees_the_idempotency_key(store: Store) -> None:
    secret = await store.write(lambda w: remember(w, "alice", "default", SECRET, key="k-1"))
    await store.write(lambda w: w.forget_memory("alice", secret.id))
    job, replayed = await store.write(lambda w: w.insert_job("alice", "default", "A new fact", "k-1", T0 + 5))
    assert not replayed and job.id != secret.job.id and job.text == "A new fact"


async def test_forget_by_job_id_forgets_the_memory_it_became(store: Store) -> None:
    secret = await store.write(remember, "alice", "default", SECRET)
    done = await store.write(lambda w: w.forget_memory("alice", secret.job.id))
    assert done.memory_ids == (secret.id,) and done.via_job == secret.job.id
    assert await store.read(lambda r: r.memories_by_pk([secret.pk])) == {}


def _consolidate(w: StoreWriter) -> tuple[Stored, Stored, str]:
    """B folded into A by a CONSOLIDATE: A's body replaced (its old body a revision), B retired."""
    a = remember(w, "alice", "default", "Alpha server runs in ZYXWVUT rack")
    b = remember(w, "alice", "default", "Beta server runs in QWERTY rack", at=T0 + 1)
    job, _ = w.insert_job("alice", "default", "Alpha and beta share a rack", None, T0 + 2)
    merged = "Alpha server runs in ZYXWVUT rack; beta server runs in QWERTY rack"
    with w.transaction():
        w.replace_body(
            pk=a.pk,
            lane=a.lane,
            body=merged,
            key=norm_key(merged),
            vector=None,
            model_id=None,
            decision="consolidated",
            job_id=job.id,
            llm_model="test-llm",
            guard="pass",
            merged_ids=[b.id],
            now=T0 + 2,
        )
        w.retire(b.pk, a.id, T0 + 2)
        w.mark_done(job.id, "consolidated", a.id, T0 + 2)
    return a, b, merged


async def test_forget_erases_previous_bodies_and_what_was_folded_in(store: Store) -> None:
    a, b, _ = await store.write(_consolidate)
    with pytest.raises(InvalidInput):  # its text lives on in A's body
        await store.write(lambda w: w.forget_memory("alice", b.id))
    done = await store.write(lambda w: w.forget_memory("alice", a.id))
    assert done.memory_ids[0] == a.id and set(done.memory_ids) == {a.id, b.id}
    exported = await store.read(everything, "alice")
    assert exported.memories == [] and exported.revisions == []
    assert {t.memory_id for t in exported.tombstones} == {a.id, b.id}
    assert all(job.text == "" for job in exported.jobs)
    lane = a.lane
    assert await store.read(lambda r: r.text_search([lane], ["zyxwvut", "qwerty", "rack"], 10)) == ([], True)


async def test_undo_restores_the_body_before_the_last_change(store: Store) -> None:
    old, new = "Standup is at 9:30", "Standup is at 9:45 on Mondays"

    def build(w: StoreWriter) -> Stored:
        memory = remember(w, "alice", "default", old)
        with w.transaction():
            w.replace_body(
                pk=memory.pk,
                lane=memory.lane,
                body=new,
                key=norm_key(new),
                vector=None,
                model_id=None,
                decision="updated",
                job_id=None,
                llm_model="test-llm",
                guard="pass",
                now=T0 + 1,
            )
        return memory

    memory = await store.write(build)
    (change,) = await store.read(lambda r: r.revisions(memory.pk))
    assert (change.body, change.decision, change.llm_model, change.guard, change.created_at) == (
        old,
        "updated",
        "test-llm",
        "pass",
        T0 + 1,
    )
    assert (await store.read(lambda r: r.memories_by_pk([memory.pk])))[memory.pk].body == new

    assert await store.write(lambda w: w.undo_last_change("alice", memory.id)) == Undone(old)
    row = (await store.read(lambda r: r.memories_by_pk([memory.pk])))[memory.pk]
    assert row.body == old and row.norm_key == norm_key(old)
    history = await store.read(lambda r: r.revisions(memory.pk))
    assert [(rev.body, rev.decision) for rev in history] == [(new, "undone"), (old, "updated")]
    lane = memory.lane
    assert await store.read(lambda r: r.text_search([lane], ["mondays"], 10)) == ([], True)
    assert [m.pk for m in (await store.read(lambda r: r.text_search([lane], ["standup"], 10)))[0]] == [memory.pk]


async def test_undoing_a_consolidate_brings_the_folded_memory_back(store: Store) -> None:
    a, b, merged = await store.write(_consolidate)
    assert await store.read(lambda r: r.memories_by_pk([b.pk])) == {}  # retired: out of every search
    assert [m.pk for m in (await store.read(lambda r: r.text_search([a.lane], ["qwerty"], 10)))[0]] == [a.pk]
    undone = await store.write(lambda w: w.undo_last_change("alice", a.id))
    assert undone.body == "Alpha server runs in ZYXWVUT rack"
    assert b.id in undone.restored
    live = await store.read(lambda r: r.memories_by_pk([a.pk, b.pk]))
    assert live[b.pk].body == "Beta server runs in QWERTY rack" and live[a.pk].body == undone.body
    found, _ = await store.read(lambda r: r.text_search([a.lane], ["qwerty"], 10))
    assert b.pk in {m.pk for m in found}
    assert (await store.read(lambda r: r.revisions(a.pk)))[0].body == merged


async def test_undo_without_a_change_is_refused(store: Store) -> None:
    memory = await store.write(remember, "alice", "default", OTHER)
    with pytest.raises(InvalidInput):
        await store.write(lambda w: w.undo_last_change("alice", memory.id))
    assert (await store.read(lambda r: r.memories_by_pk([memory.pk])))[memory.pk].body == OTHER
    assert await store.read(lambda r: r.revisions(memory.pk)) == []


async def test_forgetting_a_fact_an_undo_split_out_erases_it_from_the_merge_it_left(store: Store) -> None:
    """A fact merged into A, then split out again by undoing the merge, is its own memory B;
    A's revisions still hold the merged body that contained it. Forgetting B must erase it
    there too, or the text survives the forget (in A's history, exports and the file)."""
    before = "The office plant is a fern"
    merged = f"The office plant is a fern. {SECRET}"

    def build(w: StoreWriter) -> tuple[Stored, str]:
        a = remember(w, "alice", "default", before)
        job, _ = w.insert_job("alice", "default", SECRET, None, T0 + 1)
        with w.transaction():
            w.replace_body(
                pk=a.pk,
                lane=a.lane,
                body=merged,
                key=norm_key(merged),
                vector=None,
                model_id=None,
                decision="updated",
                job_id=job.id,
                llm_model="test-llm",
                guard="pass",
                now=T0 + 2,
            )
            w.mark_done(job.id, "updated", a.id, T0 + 2)
        return a, job.id

    a, _ = await store.write(build)
    undone = await store.write(lambda w: w.undo_last_change("alice", a.id))
    assert undone.body == before
    (b_id,) = undone.restored
    assert any(_holds_secret(rev) for rev in await store.read(lambda r: r.revisions(a.pk)))
    await store.write(lambda w: w.forget_memory("alice", b_id))
    exported = await store.read(everything, "alice")
    assert not any(_holds_secret(record) for record in [*exported.memories, *exported.revisions, *exported.jobs])
    assert not any(_holds_secret(rev) for rev in await store.read(lambda r: r.revisions(a.pk)))
    assert [m.body for m in exported.memories] == [before]
