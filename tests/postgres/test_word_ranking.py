"""The word search skips what cannot enter its top (store/postgres/text.py): its top k must be the
top k of every match scored (what `text_strengths` computes, and what the search returned before), in
the same order with the same strengths, with `exhausted` right: for single words, for repeated
words, and for phrases of several words (`foo_bar`)."""

from __future__ import annotations

import random

import pytest

from memwal_mcp.store import Store, StoreReader, StoreWriter
from memwal_mcp.store.postgres import text
from memwal_mcp.store.postgres.backend import PostgresStore

from ..store_contract.helpers import T0, lane_of, remember

# A vocabulary with word frequencies as in text (Zipf): a few words in many memories, most in few,
# so the word weights (idf) range widely, as MaxScore's skipping needs.
WORDS = [
    f"{stem}{suffix}" for stem in ("deploy", "kiwi", "region", "budget", "flight", "cache") for suffix in "abcdefghij"
]
# Parts of phrases: "foo_bar" is the phrase foo bar; "foo bar" in a body holds it too, "bar foo" does not.
PHRASES = ["foo_bar", "bar_foo", "v2.3", "alpha_beta"]


def _corpus(seed: int, count: int) -> list[str]:
    r = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    bodies = []
    for _ in range(count):
        parts = r.choices(WORDS, weights, k=r.randint(3, 16))
        for _ in range(r.randint(0, 2)):
            parts.insert(
                r.randrange(len(parts) + 1), r.choice(["foo bar", "bar foo", "v2 3", "alpha beta", "foo", "bar"])
            )
        bodies.append(" ".join(parts))
    return bodies


def _queries(seed: int) -> list[list[str]]:
    r = random.Random(seed)
    queries = [[WORDS[0]], [WORDS[-1]]] + [[p] for p in PHRASES]
    for _ in range(12):
        queries.append(r.sample(WORDS + PHRASES + ["foo", "bar"], r.randint(2, 4)))
    for _ in range(16):  # common words beside rarer ones
        queries.append(r.sample(WORDS[:5], r.randint(1, 3)) + r.sample(WORDS[5:], r.randint(1, 2)))
    queries.append([WORDS[0], WORDS[0], WORDS[1], WORDS[30]])
    queries.append([WORDS[3], WORDS[3], "foo_bar"])  # a term twice counts twice
    queries.append(["nothing", "matches"])
    return queries


def _fill(w: StoreWriter, bodies: list[str]) -> None:
    for i, body in enumerate(bodies):
        remember(w, "alice", "default" if i % 3 else "other", body, at=T0 + i)


def _compare(r: StoreReader, lanes: list[int], terms: list[str], limit: int) -> None:
    everything = r.text_strengths(lanes, terms, list(range(1, 10_000)))
    expected = sorted(everything.items(), key=lambda hit: (-hit[1], hit[0]))
    found, exhausted = r.text_search(lanes, terms, limit)
    assert [pk for pk, _ in found] == [pk for pk, _ in expected[:limit]], (terms, limit)
    assert [s for _, s in found] == pytest.approx([s for _, s in expected[:limit]], rel=1e-12, abs=0)
    assert exhausted == (len(expected) <= limit), (terms, limit, len(expected))


@pytest.mark.parametrize("at_once", [0, text.READ_AT_ONCE], ids=["step-by-step", "small-lane-in-one-read"])
async def test_the_top_k_is_the_top_k_of_every_match(
    pg_store: PostgresStore, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    # A lane this small is read in one query; 0 makes the search take its steps (MaxScore), as
    # in a big lane.
    monkeypatch.setattr(text, "READ_AT_ONCE", at_once)
    store: Store = pg_store
    await store.write(_fill, _corpus(3, 240))
    lanes = [await store.read(lane_of, "alice", "default"), await store.read(lane_of, "alice", "other")]
    for terms in _queries(4):
        for limit in (1, 3, 10, 1000):
            for searched in ([lanes[0]], lanes):
                await store.read(_compare, searched, terms, limit)
