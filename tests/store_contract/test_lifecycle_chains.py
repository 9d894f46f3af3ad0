"""Forget, purge and undo over supersede chains and merges, on every backend (issue 19).

A chain A <- B <- C (B superseded A, C superseded B) is one current fact, C. Erasing a link
gives back what it superseded only if it was current; erasing a middle link re-points what it
superseded to what superseded it, so the chain stays one current fact. Undo returns a memory to
the exact state of the revision it goes back to -- body and expiry -- and an undo that would
change nothing is refused, naming why, with nothing written.
"""

from __future__ import annotations

import time

import pytest

from memwal_mcp.errors import InvalidInput
from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import JobRequest, Undone

from .helpers import T0, Stored, everything, remember


def _status(r: StoreReader, memory_id: str) -> tuple[str, str | None]:
    found = r.memory_by_id("alice", memory_id)
    assert found is not None
    return found[1], found[0].superseded_by


def _chain(w: StoreWriter) -> tuple[Stored, Stored, Stored]:
    a = remember(w, "alice", "work", "The VPN is OpenVPN")
    b = remember(w, "alice", "work", "The VPN is IPsec", at=T0 + 1, supersedes=[a.id])
    c = remember(w, "alice", "work", "The VPN is WireGuard", at=T0 + 2, supersedes=[b.id])
    return a, b, c


async def test_forgetting_a_middle_link_keeps_one_current_fact(store: Store) -> None:
    a, b, c = await store.write(_chain)
    done = await store.write(lambda w: w.forget_memory("alice", b.id))
    assert (done.memory_ids, done.restored) == ((b.id,), ())
    assert await store.read(_status, a.id) == ("superseded", c.id)
    assert await store.read(_status, c.id) == ("live", None)
    assert [m.id for m in await store.read(lambda r: r.list_memories("alice", None, None, None, 10))] == [c.id]
    # History reads as one chain: C supersedes A now, and its supersede revision names A.
    assert await store.read(lambda r: r.superseded_by("alice", c.id)) == [a.id]
    (last, *_) = await store.read(lambda r: r.revisions(c.pk))
    assert (last.decision, last.merged_ids) == ("superseded", (a.id,))
    # So undoing C brings back the fact it now replaces, and redoing replaces it again.
    assert await store.write(lambda w: w.undo_last_change("alice", c.id)) == Undone(c.job.text, restored=(a.id,))
    assert await store.read(_status, a.id) == ("live", None)
    redone = await store.write(lambda w: w.undo_last_change("alice", c.id))
    assert redone == Undone(c.job.text, superseded_again=(a.id,))
    assert await store.read(_status, a.id) == ("superseded", c.id)


async def test_forgetting_the_current_end_of_a_chain_gives_back_only_the_link_before(store: Store) -> None:
    a, b, c = await store.write(_chain)
    done = await store.write(lambda w: w.forget_memory("alice", c.id))
    assert done.restored == (b.id,)
    assert await store.read(_status, b.id) == ("live", None)
    assert await store.read(_status, a.id) == ("superseded", b.id)


async def test_purging_an_expired_middle_link_re_points_everything_it_superseded(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored, Stored, Stored]:
        a1 = remember(w, "alice", "default", "Standup is at 9:30")
        a2 = remember(w, "alice", "default", "Standup is in room 4", at=T0 + 1)
        b = remember(
            w,
            "alice",
            "default",
            "Standup is at 9:45 in room 5",
            at=T0 + 2,
            expires_at=T0 - 5,
            supersedes=[a1.id, a2.id],
        )
        c = remember(w, "alice", "default", "Standup is at 10:00 in room 5", at=T0 + 3, supersedes=[b.id])
        return a1, a2, b, c

    a1, a2, b, c = await store.write(build)
    # What purge --expired erases, one by one, as forget does.
    assert await store.read(lambda r: r.expired_memories("alice", time.time(), 10)) == [b.id]
    done = await store.write(lambda w: w.forget_memory("alice", b.id))
    assert done.restored == ()
    assert await store.read(_status, a1.id) == ("superseded", c.id)
    assert await store.read(_status, a2.id) == ("superseded", c.id)
    assert await store.read(lambda r: r.superseded_by("alice", c.id)) == [a1.id, a2.id]
    assert [m.id for m in await store.read(lambda r: r.list_memories("alice", None, None, None, 10))] == [c.id]


def _merge(w: StoreWriter, target: Stored, text: str, at: float, expires_at: float | None = None) -> None:
    """What the worker writes for an LLM UPDATE of `target` by a new fact: the merged body,
    then the job done into it (which takes the job's expiry)."""
    if expires_at is None:
        job, _ = w.insert_job("alice", "default", text, None, at, None)
    else:
        ((job, _),) = w.insert_jobs("alice", [JobRequest("default", text, expires_at=expires_at)], at)
    merged = f"{target.job.text}; {text}"
    with w.transaction():
        w.replace_body(
            pk=target.pk,
            lane=target.lane,
            body=merged,
            key=norm_key(merged),
            vector=None,
            model_id=None,
            decision="updated",
            job_id=job.id,
            llm_model="test-llm",
            guard="pass",
            now=at,
        )
        w.mark_done(job.id, "updated", target.id, at)


def _expiry(r: StoreReader, memory_id: str) -> float | None:
    found = r.memory_by_id("alice", memory_id)
    assert found is not None
    return found[0].expires_at


async def test_undoing_a_merge_that_renewed_an_expired_fact_leaves_it_expired(store: Store) -> None:
    def build(w: StoreWriter) -> Stored:
        old = remember(w, "alice", "default", "The promo code is SPRING24", expires_at=T0 - 60)
        _merge(w, old, "The promo code also works in the app", at=T0 + 1)
        return old

    old = await store.write(build)
    assert await store.read(_expiry, old.id) is None  # said again without an end: renewed
    undone = await store.write(lambda w: w.undo_last_change("alice", old.id))
    assert undone.body == old.job.text and len(undone.restored) == 1  # the proposal, split out on its own
    assert await store.read(_expiry, old.id) == T0 - 60
    assert await store.read(lambda r: r.expired_memories("alice", time.time(), 10)) == [old.id]
    # Redo: the merged state, with the expiry it had.
    await store.write(lambda w: w.undo_last_change("alice", old.id))
    assert await store.read(_expiry, old.id) is None


async def test_undoing_a_merge_that_extended_an_expiry_restores_the_earlier_one(store: Store) -> None:
    def build(w: StoreWriter) -> Stored:
        old = remember(w, "alice", "default", "The sale runs this week", expires_at=T0 + 100)
        _merge(w, old, "The sale covers decaf", at=T0 + 1, expires_at=T0 + 500)
        return old

    old = await store.write(build)
    assert await store.read(_expiry, old.id) == T0 + 500
    await store.write(lambda w: w.undo_last_change("alice", old.id))
    assert await store.read(_expiry, old.id) == T0 + 100


async def test_an_undo_whose_superseded_memory_was_forgotten_is_refused_and_writes_nothing(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        old = remember(w, "alice", "default", "Lunch is at noon")
        new = remember(w, "alice", "default", "Lunch is at one", at=T0 + 1, supersedes=[old.id])
        return old, new

    old, new = await store.write(build)
    await store.write(lambda w: w.forget_memory("alice", old.id))
    before = await store.read(everything, "alice")
    with pytest.raises(InvalidInput, match=rf"nothing to undo.*{old.id}.*forgotten"):
        await store.write(lambda w: w.undo_last_change("alice", new.id))
    assert await store.read(everything, "alice") == before


async def test_a_redo_whose_memory_was_superseded_again_is_refused_and_writes_nothing(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        old = remember(w, "alice", "default", "The office is on floor 3")
        new = remember(w, "alice", "default", "The office is on floor 4", at=T0 + 1, supersedes=[old.id])
        return old, new

    old, new = await store.write(build)
    assert await store.write(lambda w: w.undo_last_change("alice", new.id)) == Undone(new.job.text, restored=(old.id,))
    other = await store.write(
        lambda w: remember(w, "alice", "default", "The office is on floor 5", at=T0 + 2, supersedes=[old.id])
    )
    before = await store.read(everything, "alice")
    with pytest.raises(InvalidInput, match=rf"nothing to undo.*{old.id}.*superseded by {other.id}"):
        await store.write(lambda w: w.undo_last_change("alice", new.id))
    assert await store.read(everything, "alice") == before
    assert await store.read(_status, old.id) == ("superseded", other.id)


async def test_a_redo_of_a_merge_whose_proposal_was_corrected_since_is_refused(store: Store) -> None:
    """Undo a merge (the proposal X comes back on its own), correct X (Y supersedes it), undo the
    merged memory again: the redo would bring back the body holding X's text, so the corrected
    fact would be current again beside Y. Refused, naming why, with nothing written."""

    def build(w: StoreWriter) -> Stored:
        old = remember(w, "alice", "default", "Kai's flight is LH400 at 09:00")
        _merge(w, old, "Kai's flight leaves from gate A1", at=T0 + 1)
        return old

    old = await store.write(build)
    undone = await store.write(lambda w: w.undo_last_change("alice", old.id))
    (x,) = undone.restored
    y = await store.write(
        lambda w: remember(w, "alice", "default", "Kai's flight leaves from gate C3", at=T0 + 2, supersedes=[x])
    )
    before = await store.read(everything, "alice")
    with pytest.raises(InvalidInput, match=rf"nothing to undo for {old.id}.*brought back {x}.*superseded by {y.id}"):
        await store.write(lambda w: w.undo_last_change("alice", old.id))
    assert await store.read(everything, "alice") == before
    assert await store.read(_status, x) == ("superseded", y.id)


async def test_a_redo_of_a_merge_says_what_it_folded_in_again(store: Store) -> None:
    def build(w: StoreWriter) -> Stored:
        old = remember(w, "alice", "default", "The standup is at 9:30")
        _merge(w, old, "The standup is in room 4", at=T0 + 1)
        return old

    old = await store.write(build)
    (x,) = (await store.write(lambda w: w.undo_last_change("alice", old.id))).restored
    redone = await store.write(lambda w: w.undo_last_change("alice", old.id))
    assert redone == Undone("The standup is at 9:30; The standup is in room 4", folded_again=(x,))
    found = await store.read(lambda r: r.memory_by_id("alice", x))
    assert found is not None and (found[1], found[2]) == ("retired", old.id)
