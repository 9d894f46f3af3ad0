"""Expiry, supersede and bulk remember through the service: the real store, worker and model."""

from __future__ import annotations

import time

import pytest

from memwal_mcp.errors import IdempotencyKeyReused, InvalidInput, NotFound
from memwal_mcp.schemas import ForgetOut, HistoryOut, history_text
from memwal_mcp.service import MemoryService

PAST = "2020-01-01"
FUTURE = "2999-01-01"


async def _ids(svc: MemoryService, query: str, **kwargs: object) -> list[str]:
    return [hit.id for hit in (await svc.recall("local", query, limit=10, **kwargs)).hits]


async def test_an_expired_memory_leaves_recall_and_list_and_is_back_when_asked_for(service: MemoryService):
    gone = (
        await service.remember("local", "The staging VPN password rotates on Fridays", expires_at=PAST, wait_ms=10000)
    ).job
    kept = (await service.remember("local", "The staging VPN uses WireGuard", expires_at=FUTURE, wait_ms=10000)).job
    assert gone.status == kept.status == "done"

    assert await _ids(service, "staging VPN") == [kept.memory_id]
    assert [m.id for m in (await service.list("local")).items] == [kept.memory_id]

    both = (await service.recall("local", "staging VPN", limit=10, include_expired=True)).hits
    assert {hit.id for hit in both} == {gone.memory_id, kept.memory_id}
    by_id = {hit.id: hit for hit in both}
    assert (
        by_id[gone.memory_id].expires_at is not None
        and by_id[gone.memory_id].expires_at < by_id[kept.memory_id].expires_at
    )
    listed = (await service.list("local", include_expired=True)).items
    assert {m.id for m in listed} == {gone.memory_id, kept.memory_id}


async def test_saying_an_expired_fact_again_without_an_end_renews_it(service: MemoryService):
    first = (await service.remember("local", "Alice is on call this week", expires_at=PAST, wait_ms=10000)).job
    assert await _ids(service, "Alice on call") == []
    again = (await service.remember("local", "alice is on call this week", wait_ms=10000)).job
    assert (again.decision, again.memory_id) == ("occurrence", first.memory_id)
    assert await _ids(service, "Alice on call") == [first.memory_id]


async def test_the_history_of_a_forgotten_expired_memory_does_not_say_it_is_kept(service: MemoryService):
    gone = (await service.remember("local", "Old fact about coffee beans", expires_at=PAST, wait_ms=10000)).job
    await service.forget("local", gone.memory_id)
    shown = history_text(HistoryOut.of(await service.history("local", gone.memory_id)))
    assert shown.splitlines()[0] == f"{gone.memory_id} [forgotten]"
    assert "include_expired" not in shown and "kept" not in shown, shown


async def test_purge_expired_forgets_only_the_expired(service: MemoryService):
    gone = (await service.remember("local", "Door code 4417 for the Zyxwvut lab", expires_at=PAST, wait_ms=10000)).job
    kept = (await service.remember("local", "The lab opens at 9", wait_ms=10000)).job
    assert await service.expired("local") == [gone.memory_id]
    done = await service.purge_expired("local")
    assert [outcome.memory_id for outcome in done] == [gone.memory_id]
    assert (await service.history("local", gone.memory_id)).status == "forgotten"
    assert (await service.history("local", kept.memory_id)).status == "live"
    assert await service.expired("local") == []


async def test_supersede_hides_the_old_fact_links_both_sides_and_undo_restores_it(service: MemoryService):
    old = (await service.remember("local", "User prefers dark roast coffee", wait_ms=10000)).job
    new = (
        await service.remember(
            "local", "User now prefers green tea over coffee", supersedes=[old.memory_id], wait_ms=10000
        )
    ).job
    assert new.supersedes == (old.memory_id,)
    assert old.memory_id not in await _ids(service, "coffee preference")
    assert old.memory_id not in [m.id for m in (await service.list("local")).items]

    shown = (await service.recall("local", "dark roast coffee", limit=10, include_superseded=True)).hits
    marked = {hit.id: hit.superseded_by for hit in shown}
    assert marked.get(old.memory_id) == new.memory_id
    listed = {m.id: m.superseded_by for m in (await service.list("local", include_superseded=True)).items}
    assert listed[old.memory_id] == new.memory_id

    old_history = await service.history("local", old.memory_id)
    assert (old_history.status, old_history.superseded_by) == ("superseded", new.memory_id)
    assert (await service.history("local", new.memory_id)).supersedes == [old.memory_id]

    undone = await service.undo("local", new.memory_id)
    assert undone.restored == [old.memory_id]
    assert old.memory_id in await _ids(service, "dark roast coffee")
    assert (await service.history("local", old.memory_id)).status == "live"
    # Undoing the undo replaces it again.
    await service.undo("local", new.memory_id)
    assert old.memory_id not in await _ids(service, "dark roast coffee")


async def test_a_superseded_memory_can_be_forgotten_on_its_own(service: MemoryService):
    old = (await service.remember("local", "The build server is ci-old.example.org", wait_ms=10000)).job
    new = (
        await service.remember("local", "The build server is ci.example.org", supersedes=[old.memory_id], wait_ms=10000)
    ).job
    await service.forget("local", old.memory_id)
    assert (await service.history("local", old.memory_id)).status == "forgotten"
    assert (await service.history("local", new.memory_id)).status == "live"


async def test_forgetting_the_replacement_brings_the_old_fact_back_to_recall(service: MemoryService):
    old = (await service.remember("local", "The build server is ci-old.example.org", wait_ms=10000)).job
    new = (
        await service.remember(
            "local", "The build server moved to ci.example.org", supersedes=[old.memory_id], wait_ms=10000
        )
    ).job
    assert await _ids(service, "build server") == [new.memory_id]
    done = await service.forget("local", new.memory_id)
    assert done.restored == (old.memory_id,)
    assert f"{old.memory_id}, which it superseded, is live again" in ForgetOut.of(done).summary()
    assert await _ids(service, "build server") == [old.memory_id]
    history = await service.history("local", old.memory_id)
    assert (history.status, history.superseded_by) == ("live", None)


async def test_purging_an_expired_replacement_brings_the_old_fact_back(service: MemoryService):
    old = (await service.remember("local", "The promo page is shop.example.com/promo", wait_ms=10000)).job
    new = (
        await service.remember(
            "local",
            "The summer promo page is shop.example.com/summer",
            expires_at=PAST,
            supersedes=[old.memory_id],
            wait_ms=10000,
        )
    ).job
    done = await service.purge_expired("local")
    assert [(outcome.memory_id, outcome.restored) for outcome in done] == [(new.memory_id, (old.memory_id,))]
    assert await _ids(service, "promo page") == [old.memory_id]


async def test_a_superseded_fact_left_behind_offers_no_undo_that_would_be_refused(service: MemoryService):
    """Past its expiry, a superseded fact is no longer superseded when its replacement is
    forgotten, but expired (purge erases it); forgotten itself, it stays forgotten. Neither
    history offers the undo, nor names a replacement that is gone."""
    expired = (await service.remember("local", "Flash sale on espresso beans", expires_at=PAST, wait_ms=10000)).job
    gone = (await service.remember("local", "The flash sale page is /flash", wait_ms=10000)).job
    new = (
        await service.remember(
            "local",
            "The flash sale moved to Friday",
            supersedes=[expired.memory_id, gone.memory_id],
            wait_ms=10000,
        )
    ).job
    offered = f"memwal-mcp undo {new.memory_id} brings it back"
    before = await service.history("local", expired.memory_id)
    assert before.undo_restores and offered in history_text(HistoryOut.of(before))
    await service.forget("local", gone.memory_id)
    assert offered not in history_text(HistoryOut.of(await service.history("local", gone.memory_id)))

    forgot = await service.forget("local", new.memory_id)
    assert (forgot.restored, forgot.expired_back) == ((), (expired.memory_id,))
    after = await service.history("local", expired.memory_id)
    assert (after.status, after.superseded_by, after.superseded_by_status) == ("live", None, None)
    shown = history_text(HistoryOut.of(after))
    assert "undo" not in shown and "superseded by" not in shown and "[expired " in shown, shown
    assert [outcome.memory_id for outcome in await service.purge_expired("local")] == [expired.memory_id]


async def test_forget_by_query_reaches_superseded_and_expired_copies(service: MemoryService):
    old = (await service.remember("local", "The Zyxwvut lab door code is 4417", wait_ms=10000)).job
    new = (
        await service.remember("local", "The Zyxwvut lab door code is 5521", supersedes=[old.memory_id], wait_ms=10000)
    ).job
    expired = (
        await service.remember("local", "The Zyxwvut lab spare door code was 9090", expires_at=PAST, wait_ms=10000)
    ).job
    other = (await service.remember("local", "The office plant needs water on Mondays", wait_ms=10000)).job
    targets = await service.forget_matches("local", "Zyxwvut lab door code", 10, "default")
    marks = {t.copy.id: (t.copy.superseded_by, t.copy.expired(time.time())) for t in targets}
    assert marks == {
        old.memory_id: (new.memory_id, False),
        new.memory_id: (None, False),
        expired.memory_id: (None, True),
    }
    order = [t.copy.id for t in targets]
    assert order.index(old.memory_id) < order.index(new.memory_id)  # erased first: not brought back by the other
    outcomes = [await service.forget("local", t.copy.id) for t in targets]
    assert all(outcome.restored == () for outcome in outcomes)
    left = await service.recall(
        "local", "Zyxwvut lab door code", limit=10, include_expired=True, include_superseded=True
    )
    assert all("Zyxwvut" not in hit.text for hit in left.hits)
    assert [m.id for m in (await service.list("local", include_expired=True, include_superseded=True)).items] == [
        other.memory_id
    ]


async def test_supersede_refuses_unknown_foreign_and_gone_ids_and_stores_nothing(service: MemoryService):
    theirs = (await service.remember("bob", "Bob's fact", wait_ms=10000)).job
    mine = (await service.remember("local", "My fact", wait_ms=10000)).job
    for bad in ("m_0000000000000000", theirs.memory_id):
        with pytest.raises(NotFound, match=bad):
            await service.remember("local", "A correction", supersedes=[mine.memory_id, bad], idempotency_key="k1")
    await service.forget("local", mine.memory_id)
    with pytest.raises(InvalidInput, match="forgotten"):
        await service.remember("local", "A correction", supersedes=[mine.memory_id])
    with pytest.raises(InvalidInput, match="supersedes"):
        await service.remember("local", "A correction", supersedes="m_0000000000000000")
    # Nothing was filed: the key is still free, and bob's memory is untouched.
    filed = await service.remember("local", "Another fact", idempotency_key="k1")
    assert not filed.replayed
    assert (await service.history("bob", theirs.memory_id)).status == "live"


async def test_remember_many_files_every_item_in_order_and_replays_per_key(service: MemoryService):
    items = [{"text": f"Server s{i} runs version 1.{i}", "idempotency_key": f"k{i}"} for i in range(100)]
    items[7]["namespace"] = "ops"
    items[8]["expires_at"] = PAST
    first = await service.remember_many("local", items)
    assert [o.job.text for o in first] == [item["text"] for item in items]
    assert first[7].job.namespace == "ops" and first[8].job.expires_at is not None
    assert not any(o.replayed for o in first)
    again = await service.remember_many("local", items, wait_ms=20000)
    assert [o.job.id for o in again] == [o.job.id for o in first]
    assert all(o.replayed for o in again)


async def test_remember_many_with_one_bad_item_names_it_and_stores_nothing(service: MemoryService):
    good = [{"text": "Fact one"}, {"text": "Fact two", "idempotency_key": "k-two"}]
    cases = [
        ({"text": ""}, r"items\[2\]: text is empty"),
        ({"text": "x", "expires_at": "soon"}, r"items\[2\]: expires_at"),
        ({"text": "x", "colour": "red"}, r"items\[2\]\.colour is not a field"),
        ("just text", r"items\[2\] must be an object"),
    ]
    for bad, message in cases:
        with pytest.raises(InvalidInput, match=message):
            await service.remember_many("local", [*good, bad])
    with pytest.raises(InvalidInput, match=r"^items: at most 100 items, got 101$"):
        await service.remember_many("local", [{"text": "x"}] * 101)
    with pytest.raises(InvalidInput, match=r"^items is empty; give 1 to 100 facts$"):
        await service.remember_many("local", [])
    assert (await service.stats()).queue == {}
    # A key already used for another text is refused the same way, naming the item.
    await service.remember("local", "Fact three", idempotency_key="k-three")
    with pytest.raises(IdempotencyKeyReused, match=r"items\[2\]: idempotency_key 'k-three'"):
        await service.remember_many("local", [*good, {"text": "Not fact three", "idempotency_key": "k-three"}])
    assert sum((await service.stats()).queue.values()) == 1


async def test_remember_many_supersedes_per_item_and_names_the_item_it_refuses(service: MemoryService):
    old = (await service.remember("local", "The build server is ci-old.example.org", wait_ms=10000)).job
    other = (await service.remember("local", "Builds take 12 minutes", wait_ms=10000)).job
    target = [old.memory_id]
    cases = [
        ([{"text": "a"}, {"text": "b", "supersedes": ["m_0000000000000000"]}], NotFound, r"items\[1\]: supersedes"),
        (
            [{"text": "a", "supersedes": target}, {"text": "b", "supersedes": [other.memory_id, *target]}],
            InvalidInput,
            rf"items\[1\]: supersedes names '{old.memory_id}', which items\[0\] already supersedes; nothing was",
        ),
        ([{"text": "a"}, {"text": "b", "supersedes": "m_0000000000000000"}], InvalidInput, r"items\[1\]: supersedes"),
    ]
    for items, error, message in cases:
        with pytest.raises(error, match=message):
            await service.remember_many("local", items)
    assert sum((await service.stats()).queue.values()) == 2  # the two remembered above, nothing more
    filed = await service.remember_many(
        "local", [{"text": "The build server is ci.example.org", "supersedes": target}], wait_ms=10000
    )
    assert (await service.history("local", old.memory_id)).superseded_by == filed[0].job.memory_id
