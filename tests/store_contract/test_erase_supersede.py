"""Erasing a memory that superseded others (forget, and purge --expired, which forgets) gives
them back live as undoing the supersede would: left superseded by a memory that is gone, they
would be in no recall, with an undo that is refused. One past its expiry, or erased itself,
stays as it is. And every stored copy of a text -- superseded and expired ones too -- is what a
forget of that text must reach."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memwal_mcp.errors import InvalidInput
from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.records import JobRequest, StoredCopy

from .helpers import T0, Stored, everything, prepare_vectors, remember, unit_vectors

WORD = "Qwzxplorf"  # in no other text: a leftover copy of the replacement is easy to see


def _status(r: StoreReader, memory_id: str) -> tuple[str, str | None]:
    found = r.memory_by_id("alice", memory_id)
    assert found is not None
    return found[1], found[0].superseded_by


async def test_forgetting_the_replacement_brings_back_what_it_replaced(store: Store) -> None:
    vectors = unit_vectors(np.random.default_rng(11), 2)

    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        prepare_vectors(w)
        old = remember(w, "alice", "home", "User prefers dark roast coffee", vector=vectors[0])
        new = remember(
            w, "alice", "default", f"User switched to {WORD} tea", vector=vectors[1], at=T0 + 1, supersedes=[old.id]
        )
        return old, new

    old, new = await store.write(build)
    assert await store.read(_status, old.id) == ("superseded", new.id)

    done = await store.write(lambda w: w.forget_memory("alice", new.id))
    assert (done.memory_ids, done.restored) == ((new.id,), (old.id,))

    def back(r: StoreReader) -> None:
        assert _status(r, old.id) == ("live", None)
        assert r.memories_by_pk([old.pk, new.pk]).keys() == {old.pk}
        assert [m.pk for m in r.text_search([old.lane], ["coffee"], 10)[0]] == [old.pk]
        assert r.superseded_in([old.lane], 10) == []
        assert [row.id for row in r.list_memories("alice", None, None, None, 10)] == [old.id]
        # Its vector comes back from the worker's backlog pass, as after an undo.
        assert old.pk in {pk for pk, _, _ in r.unembedded(10)}

    await store.read(back)
    exported = await store.read(everything, "alice")
    assert not any(WORD.lower() in repr(row).lower() for row in exported.rows())
    with pytest.raises(InvalidInput, match="forgotten"):  # nothing is left to undo
        await store.write(lambda w: w.undo_last_change("alice", new.id))


async def test_what_it_replaced_comes_back_expired_when_past_its_expiry_and_a_forgotten_one_stays(store: Store) -> None:
    """Past its expiry, what the erased memory replaced is what it would be had that memory never
    been: expired, not live again, and never left superseded by a memory that is gone."""

    def build(w: StoreWriter) -> tuple[Stored, Stored, Stored, Stored]:
        expired = remember(w, "alice", "default", "Flash sale on espresso beans", expires_at=T0 - 60)
        gone = remember(w, "alice", "default", "The sale page is shop.example.com/flash", at=T0 + 1)
        kept = remember(w, "alice", "default", "The sale covers decaf too", at=T0 + 2, expires_at=T0 + 3600)
        new = remember(
            w,
            "alice",
            "default",
            "The flash sale moved to Friday",
            at=T0 + 3,
            supersedes=[expired.id, gone.id, kept.id],
        )
        return expired, gone, kept, new

    expired, gone, kept, new = await store.write(build)
    await store.write(lambda w: w.forget_memory("alice", gone.id))
    done = await store.write(lambda w: w.forget_memory("alice", new.id))
    assert (done.memory_ids, done.restored) == ((new.id,), (kept.id,))  # not yet expired: back
    assert done.expired_back == (expired.id,)
    assert await store.read(_status, kept.id) == ("live", None)
    assert await store.read(_status, expired.id) == ("live", None)
    assert expired.id not in [
        m.id for m in await store.read(lambda r: r.list_memories("alice", None, None, None, 10, time.time()))
    ]
    assert (await store.read(_status, gone.id))[0] == "forgotten"
    # Past its end it would be in no recall anyway: purge --expired erases it.
    assert await store.read(lambda r: r.expired_memories("alice", time.time(), 10)) == [expired.id]
    purged = await store.write(lambda w: w.forget_memory("alice", expired.id))
    assert (purged.memory_ids, purged.restored) == ((expired.id,), ())


async def test_an_expired_replacement_purged_brings_back_what_it_replaced(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, Stored]:
        old = remember(w, "alice", "default", "The promo page is shop.example.com/promo")
        new = remember(
            w, "alice", "default", f"The {WORD} promo ran until June", at=T0 + 1, expires_at=T0 - 5, supersedes=[old.id]
        )
        return old, new

    old, new = await store.write(build)
    # What purge erases, one by one, as forget does.
    (purged,) = await store.read(lambda r: r.expired_memories("alice", time.time(), 10))
    assert purged == new.id
    done = await store.write(lambda w: w.forget_memory("alice", purged))
    assert done.restored == (old.id,)
    assert await store.read(_status, old.id) == ("live", None)
    assert await store.read(lambda r: r.expired_memories("alice", time.time(), 10)) == []


async def test_a_memory_erased_along_gives_back_what_it_replaced_too(store: Store) -> None:
    """X replaced A, then a CONSOLIDATE folded X into B: forgetting B erases X with it, so A is
    back. A chain C -> B -> A: forgetting B (superseded itself) gives nothing back: A is
    superseded by C now, the one current fact (test_lifecycle_chains.py)."""

    def build(w: StoreWriter) -> tuple[Stored, Stored, Stored]:
        a = remember(w, "alice", "default", "Standup is at 9:30")
        x = remember(w, "alice", "default", "Standup moved to 9:45", at=T0 + 1, supersedes=[a.id])
        b = remember(w, "alice", "default", "The team meets every day", at=T0 + 2)
        merged = "The team meets every day; standup moved to 9:45"
        with w.transaction():
            w.replace_body(
                pk=b.pk,
                lane=b.lane,
                body=merged,
                key=norm_key(merged),
                vector=None,
                model_id=None,
                decision="consolidated",
                job_id=None,
                llm_model="test-llm",
                guard="pass",
                merged_ids=[x.id],
                now=T0 + 3,
            )
            w.retire(x.pk, b.id, T0 + 3)
        return a, x, b

    a, x, b = await store.write(build)
    done = await store.write(lambda w: w.forget_memory("alice", b.id))
    assert set(done.memory_ids) == {b.id, x.id} and done.restored == (a.id,)
    assert await store.read(_status, a.id) == ("live", None)

    def chain(w: StoreWriter) -> tuple[Stored, Stored, Stored]:
        first = remember(w, "alice", "work", "The VPN is OpenVPN", at=T0 + 10)
        second = remember(w, "alice", "work", "The VPN is IPsec", at=T0 + 11, supersedes=[first.id])
        third = remember(w, "alice", "work", "The VPN is WireGuard", at=T0 + 12, supersedes=[second.id])
        return first, second, third

    first, second, third = await store.write(chain)
    done = await store.write(lambda w: w.forget_memory("alice", second.id))
    assert done.restored == ()
    assert await store.read(_status, first.id) == ("superseded", third.id)
    assert await store.read(_status, third.id) == ("live", None)
    assert await store.read(lambda r: r.superseded_by("alice", third.id)) == [first.id]


async def test_copies_of_names_superseded_and_expired_copies_with_their_state(store: Store) -> None:
    """What forget --query erases for a hit: every stored copy of its text, whatever recall
    would show by default. A copy merged into another memory is not one: its text lives on in
    that memory's body, and forgetting that memory erases it."""
    text = "The garage door code is 4417"

    def build(w: StoreWriter) -> tuple[Stored, Stored, Stored, Stored, str]:
        live = remember(w, "alice", "default", text)
        expired = remember(w, "alice", "default", text + "  ", at=T0 + 1, expires_at=T0 - 5)
        superseded = remember(w, "alice", "default", text.upper(), at=T0 + 2)
        new = remember(w, "alice", "default", "The garage has a keypad", at=T0 + 3, supersedes=[superseded.id])
        folded = remember(w, "alice", "default", text, at=T0 + 4)
        with w.transaction():
            w.retire(folded.pk, new.id, T0 + 4)
        ((queued, _),) = w.insert_jobs("alice", [JobRequest("default", text, expires_at=T0 + 999)], T0 + 5)
        return live, expired, superseded, new, queued.id

    live, expired, superseded, new, queued = await store.write(build)
    copies = await store.read(lambda r: r.copies_of("alice", [live.lane], [norm_key(text)]))
    assert copies == [
        StoredCopy(live.id, norm_key(text), text),
        StoredCopy(expired.id, norm_key(text), text + "  ", expires_at=T0 - 5),
        StoredCopy(superseded.id, norm_key(text), text.upper(), superseded_by=new.id),
        StoredCopy(queued, norm_key(text), text, expires_at=T0 + 999),
    ]
