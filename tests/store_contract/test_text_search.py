"""Text search: memories holding any of the terms, strongest first, an honest `exhausted`,
and terms that are only ever words, never query syntax."""

from __future__ import annotations

import pytest

from memwal_mcp.normalize import norm_key
from memwal_mcp.store import Store, StoreWriter, TextMatch
from memwal_mcp.store.records import QueuedText

from .helpers import T0, Stored, remember

# Memories without the searched words: BM25 needs a corpus in which a term is rare.
FILLER = [
    "The office plant needs water on Mondays",
    "Deploys go out on Fridays from the east region",
    "Lunch is usually at half past twelve",
    "The printer on floor three jams often",
    "Parking passes renew every January",
    "The wifi password changed last week",
    "Quarterly reviews happen in the big room",
    "The coffee machine was descaled yesterday",
    "Bicycles go in the basement rack",
    "Fire drills are announced a day before",
]


def _fill(w: StoreWriter, texts: list[str], namespace: str = "default") -> list[Stored]:
    return [remember(w, "alice", namespace, text, at=T0 + i) for i, text in enumerate(texts)]


async def _search(store: Store, lanes: list[int], terms: list[str], limit: int = 50) -> tuple[list[TextMatch], bool]:
    return await store.read(lambda r: r.text_search(lanes, terms, limit))


async def test_memories_holding_any_term_are_found(store: Store) -> None:
    made = await store.write(
        _fill, FILLER + ["A zebra crossing near the school", "Apple pie on Sundays", "Zebra and apple stickers"]
    )
    zebra, apple, both = made[-3:]
    found, exhausted = await _search(store, [zebra.lane], ["zebra", "apple"])
    assert {m.pk for m in found} == {zebra.pk, apple.pk, both.pk} and exhausted
    assert found[0].pk == both.pk  # it holds both terms
    assert all(m.strength > 0 for m in found)
    upper, _ = await _search(store, [zebra.lane], ["ZEBRA"])
    assert {m.pk for m in upper} == {zebra.pk, both.pk}
    assert await _search(store, [zebra.lane], ["giraffe"]) == ([], True)
    assert await _search(store, [zebra.lane], []) == ([], True)


async def test_a_term_twice_beats_once_at_equal_length(store: Store) -> None:
    made = await store.write(_fill, FILLER + ["kiwi grows kiwi here", "kiwi grows fast here"])
    twice, once = made[-2:]
    found, _ = await _search(store, [twice.lane], ["kiwi"])
    assert [m.pk for m in found] == [twice.pk, once.pk]
    assert found[0].strength > found[1].strength > 0


async def test_the_strongest_come_first_within_the_limit(store: Store) -> None:
    matches = ["mango " * n + "fruit salad bowl" for n in (1, 3, 2, 5, 4)]  # longer, but more mango
    made = await store.write(_fill, FILLER * 2 + matches)
    by_count = sorted(made[-5:], key=lambda s: -s.job.text.count("mango"))
    found, exhausted = await _search(store, [made[0].lane], ["mango"], 3)
    assert not exhausted
    assert [m.pk for m in found] == [s.pk for s in by_count[:3]]
    strengths = [m.strength for m in found]
    assert strengths == sorted(strengths, reverse=True)


async def test_exhausted_says_whether_more_matches_exist(store: Store) -> None:
    made = await store.write(_fill, FILLER + [f"Melon number {i}" for i in range(5)])
    lane = made[0].lane
    found, exhausted = await _search(store, [lane], ["melon"], 10)
    assert len(found) == 5 and exhausted
    found, exhausted = await _search(store, [lane], ["melon"], 4)
    assert len(found) == 4 and not exhausted
    found, exhausted = await _search(store, [lane], ["melon"], 1)
    assert len(found) == 1 and not exhausted


async def test_exhausted_when_the_limit_takes_the_last_match(store: Store) -> None:
    """The contract's "True when there are no more to find" holds also when the last match fills the limit."""
    made = await store.write(_fill, FILLER + [f"Melon number {i}" for i in range(5)])
    await store.write(_fill, FILLER[:3], "other")
    one = [made[0].lane]
    both = await store.read(lambda r: [lane.id for lane in r.owner_lanes("alice")])
    for lanes in (one, both):
        found, exhausted = await _search(store, lanes, ["melon"], 5)
        assert len(found) == 5 and exhausted


async def test_terms_are_words_never_query_syntax(store: Store) -> None:
    made = await store.write(
        _fill,
        FILLER
        + [
            "Coffee or tea in the morning",
            "The shop near the station",
            "Do not disturb after ten",
            'She said "hello" twice',
            "A zebra painting",
        ],
    )
    lane = made[0].lane
    either, near, negation, quoted, zebra = (s.pk for s in made[-5:])
    assert [m.pk for m in (await _search(store, [lane], ["OR"]))[0]] == [either]
    assert [m.pk for m in (await _search(store, [lane], ["NEAR"]))[0]] == [near]
    assert [m.pk for m in (await _search(store, [lane], ["NOT"]))[0]] == [negation]
    assert [m.pk for m in (await _search(store, [lane], ['"hello"']))[0]] == [quoted]
    assert (await _search(store, [lane], ["zeb*"]))[0] == []  # no prefix search
    assert [m.pk for m in (await _search(store, [lane], ["*", '"', "zebra"]))[0]] == [zebra]
    hostile = ['"', "*", "AND", "NEAR(", "NEAR/2", "(", ")", ":", "^", "-", "+", "{", "}", '""', "'", "body:"]
    for term in hostile:
        found, _ = await _search(store, [lane], [term])
        assert {m.pk for m in found} <= {either, near, negation, quoted, zebra}, term


async def test_strengths_of_named_memories_match_the_search(store: Store) -> None:
    made = await store.write(_fill, FILLER + ["Papaya smoothie", "Papaya and lime papaya", "Lime soda"])
    lane = made[0].lane
    found, _ = await _search(store, [lane], ["papaya", "lime"])
    strengths = await store.read(lambda r: r.text_strengths([lane], ["papaya", "lime"], [s.pk for s in made]))
    assert strengths == pytest.approx({m.pk: m.strength for m in found}, rel=1e-9)
    assert await store.read(lambda r: r.text_strengths([lane], [], [s.pk for s in made])) == {}


async def test_a_queued_text_scores_as_the_memory_it_becomes(store: Store) -> None:
    made = await store.write(_fill, FILLER + ["Guava jam recipe", "Guava trees in the yard"])
    lane = made[0].lane
    texts = [QueuedText("Guava juice and guava cake", lane), QueuedText("Nothing of the sort", lane)]
    predicted = await store.read(lambda r: r.score_queued([lane], ["guava"], texts, True))
    assert predicted.keys == [norm_key(t.text) for t in texts]
    assert predicted.added == {lane: (2, sum(len(t.text) for t in texts))}
    assert predicted.strengths[0] is not None and predicted.strengths[1] is None
    curated = await store.write(lambda w: [remember(w, "alice", "default", t.text, at=T0 + 50) for t in texts])
    found, _ = await _search(store, [lane], ["guava"])
    assert {m.pk: m.strength for m in found}[curated[0].pk] == pytest.approx(predicted.strengths[0], rel=1e-9)


async def test_a_queued_repeat_of_a_live_memory_adds_no_row(store: Store) -> None:
    made = await store.write(_fill, FILLER)
    repeat = [QueuedText("  the office plant NEEDS water on mondays", made[0].lane)]
    folded = await store.read(lambda r: r.score_queued([made[0].lane], ["plant"], repeat, True))
    assert folded.added == {}
    kept = await store.read(lambda r: r.score_queued([made[0].lane], ["plant"], repeat, False))
    assert kept.added == {made[0].lane: (1, len(repeat[0].text))}


async def test_strength_depends_only_on_the_searched_namespaces(store: Store) -> None:
    """The contract's strength is BM25 "over the searched lanes" (DESIGN: what an owner keeps
    elsewhere never moves a memory's score)."""
    made = await store.write(_fill, FILLER + ["Lychee tea in the afternoon"])
    lane = made[0].lane

    before, _ = await _search(store, [lane], ["lychee", "tea"])
    await store.write(_fill, [f"Lychee tea batch {i}" for i in range(8)], "pantry")
    after, _ = await _search(store, [lane], ["lychee", "tea"])
    assert after == before
