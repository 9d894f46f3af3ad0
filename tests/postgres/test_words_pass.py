"""A database whose memories were indexed by an older words version (Snowball stems, before
words VERSION 2) is re-tokenized when the store opens: a query then finds them by FTS5's
stems, as SQLite would, and the lane's word counts stay exact."""

from __future__ import annotations

import psycopg
from py_rust_stemmers import SnowballStemmer

from memwal_mcp.store.postgres import words
from memwal_mcp.store.postgres.backend import PostgresStore

from ..store_contract.helpers import lane_of, remember

BODIES = [
    "Standups are on two days a week",
    "The kestrel server uses port 8443",
    "Plain words only here",
]
QUERY = ["days", "uses"]  # Porter: dai, us; Snowball stored day, use


def _snowball_document(text: str) -> str:
    """The tsvector literal words VERSION 1 stored."""
    stems = SnowballStemmer("english").stem_words(words.raw_tokens(text))
    positions: dict[str, list[int]] = {}
    for i, stem in enumerate(stems, start=1):
        positions.setdefault(stem, []).append(i)
    return " ".join(f"'{stem}':{','.join(map(str, where))}" for stem, where in positions.items())


async def _found(store: PostgresStore, terms: list[str]) -> list[str]:
    def search(reader):  # type: ignore[no-untyped-def]
        found, _ = reader.text_search([lane_of(reader, "alice", "default")], terms, 10)
        rows = reader.memories_by_pk([m.pk for m in found])
        return sorted(rows[m.pk].body for m in found)

    return await store.read(search)


async def test_memories_of_an_older_words_version_are_re_tokenized_at_open(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.open()
    try:
        await store.write(
            lambda w: [remember(w, "alice", "default", body, at=1e9 + i) for i, body in enumerate(BODIES)]
        )
    finally:
        await store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the code before VERSION 2 wrote them
        for body in BODIES:
            conn.execute(
                "UPDATE memories SET tsv = %s::tsvector, words_version = 1 WHERE body = %s",
                (_snowball_document(body), body),
            )
        query = words.any_query(words.phrases(QUERY))
        before = conn.execute("SELECT body FROM memories WHERE tsv @@ %s::tsquery", (query,)).fetchall()
    assert before == []  # the stale words miss FTS5's stems

    upgraded = PostgresStore(pg_url)
    await upgraded.open()  # the words pass runs here
    try:
        found = await _found(upgraded, QUERY)
        problems, _ = await upgraded.read(lambda r: r.check())
    finally:
        await upgraded.close()

    assert found == ["Standups are on two days a week", "The kestrel server uses port 8443"]
    assert [p for p in problems if p.severity == "error"] == []  # lane_terms count the new words exactly
    with psycopg.connect(pg_url, autocommit=True) as conn:
        stale = conn.execute("SELECT count(*) FROM memories WHERE words_version < %s", (words.VERSION,)).fetchone()
        kept = conn.execute("SELECT lexeme FROM lane_terms WHERE lexeme IN ('dai', 'day', 'us', 'use')").fetchall()
    assert stale == (0,)
    assert sorted(kept) == [("dai",), ("us",)]
