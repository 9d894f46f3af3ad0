"""Query terms reach the text index as typed (recall no longer casefolds them): the index must
fold a query word exactly as it folded the memory bodies, or a word stored with ß, a
ligature, a dotted capital I or a diacritic is unfindable by the very word it was stored as.
And the ceilings recall divides by, asked for with no queued text, are the lane's own."""

from __future__ import annotations

import pytest

from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import QueuedText

from .helpers import T0, Stored, remember
from .test_text_search import FILLER

SPECIAL = [
    "Meet at the Straße corner bakery",
    "The ﬁnance team owns the budget",
    "Flights to İstanbul leave at nine",
    "The Café on the square opens early",
]


def _fill(w: StoreWriter) -> list[Stored]:
    return [remember(w, "alice", "default", text, at=T0 + i) for i, text in enumerate(FILLER + SPECIAL)]


@pytest.mark.parametrize(
    ("term", "which"),
    [
        ("Straße", 0),
        ("STRAßE", 0),
        ("straße", 0),
        ("ﬁnance", 1),
        ("İstanbul", 2),
        ("İSTANBUL", 2),
        ("Café", 3),
        ("CAFÉ", 3),
        ("cafe", 3),
    ],
)
async def test_a_word_is_found_by_the_word_it_was_stored_as_in_any_case(store: Store, term: str, which: int) -> None:
    made = await store.write(_fill)
    wanted = made[len(FILLER) + which]
    found, _ = await store.read(lambda r: r.text_search([wanted.lane], [term], 10))
    assert [m.pk for m in found] == [wanted.pk]
    strengths = await store.read(lambda r: r.text_strengths([wanted.lane], [term], [s.pk for s in made]))
    assert set(strengths) == {wanted.pk} and strengths[wanted.pk] == pytest.approx(found[0].strength, rel=1e-9)
    queued = await store.read(
        lambda r: r.score_queued([wanted.lane], [term], [QueuedText(SPECIAL[which], wanted.lane)], False)
    )
    assert queued.strengths[0] is not None and queued.strengths[0] > 0


async def test_ceilings_without_queued_texts_are_over_the_lanes_current_statistics(store: Store) -> None:
    made = await store.write(_fill)
    lane = made[0].lane
    terms = ["bakery", "budget", "giraffe"]
    alone = await store.read(lambda r: r.score_queued([lane], terms, [], True))
    assert alone.strengths == [] and alone.added == {}
    # A queued repeat of a live memory adds no row, so it leaves the statistics as they are.
    repeat = [QueuedText(FILLER[0], lane)]
    same = await store.read(lambda r: r.score_queued([lane], terms, repeat, True))
    assert same.added == {}
    assert alone.ceilings == pytest.approx(same.ceilings, rel=1e-12) and alone.ceilings[lane] > 0
    # No memory matches more than the whole query's weight.
    found, _ = await store.read(lambda r: r.text_search([lane], terms, 50))
    assert found and all(0 < m.strength <= alone.ceilings[lane] for m in found)
    # A queued text that holds a term makes it commoner: the ceiling it would give is lower.
    grown = await store.read(lambda r: r.score_queued([lane], terms, [QueuedText("budget bakery budget", lane)], True))
    assert grown.ceilings[lane] < alone.ceilings[lane]
    assert (await store.read(lambda r: r.score_queued([lane], [], [], True))).ceilings == {}
