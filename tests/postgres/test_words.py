"""The PostgreSQL backend sees words as the SQLite backend's FTS5 does, and scores them alike.

Tokens are compared with FTS5's own `unicode61 remove_diacritics 2` tokenizer (SQLite's, without
the stemmer): they must be the same tokens; stems with FTS5's `porter` in tests/test_porter.py.
Scores are compared with SQLite's bm25() on one corpus stored in both backends through the
contract, words the Snowball stemmer used before split differently from Porter included ("uses"
and "us", "Mondays", "exactly", "general" and "generous"): both must agree exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.store import Store, open_store
from memwal_mcp.store.postgres import words
from memwal_mcp.store.sqlite.connection import sqlite_module

from ..store_contract.helpers import lane_of, remember

SAMPLES = [
    "東京 café naïve foo_bar MEMWAL_DB_URL v2.3 3.5 1e5 abc123",
    "e\u0301cole ﬁne İstanbul straße ΆΈ ǅ Ærøskøbing",
    "क्षत्रिय हिन्दी русский текст ΕΛΛΗΝΙΚΑ",
    "tabs\tand\nnewlines, (parens) [brackets] {braces} a-b a/b a.b a'b",
    "emoji 🎉 between words, ZWJ 👩‍💻 and \u200bzero-width\u200b",
    "\ue000private use and ½ fractions ² superscripts ٣ arabic digits",
]


def _fts5_tokens(texts: list[str]) -> list[list[str]]:
    conn = sqlite_module().connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
    conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", [(i + 1, text) for i, text in enumerate(texts)])
    found: dict[int, list[tuple[int, str]]] = {}
    for doc, offset, term in conn.execute("SELECT doc, offset, term FROM v"):
        found.setdefault(doc, []).append((offset, term))
    conn.close()
    return [[term for _, term in sorted(found.get(i + 1, []))] for i in range(len(texts))]


def test_tokens_are_fts5_unicode61_tokens() -> None:
    assert [words.raw_tokens(text) for text in SAMPLES] == _fts5_tokens(SAMPLES)


def test_stemming_folds_inflections_and_keeps_every_word() -> None:
    assert words.tokens("Deploys deploying DEPLOYED") == ["deploi"] * 3  # FTS5's Porter stem
    assert words.tokens("the and of not") == ["the", "and", "of", "not"]  # no stop words


def test_a_document_counts_its_tokens_and_their_positions() -> None:
    literal, length = words.document("Kiwi grows kiwi; kiwi's here")
    assert length == 6  # kiwi grows kiwi kiwi s here
    assert literal.startswith("'kiwi':1,3,4 ")


CORPUS = [
    "The office plant needs water on Mondays",
    "Deploys go out on Fridays from the east region",
    "Lunch is usually at half past twelve",
    "The printer on floor three jams often",
    "Parking passes renew every January",
    "The wifi password changed last week",
    "Quarterly reviews happen in the big room",
    "The coffee machine was descaled yesterday",
    "User prefers dark roast coffee, never decaf",
    "Alice takes the 8:15 train to the office",
    "The staging database password rotates every Monday",
    "Deploying on Fridays is discouraged after 3 pm",
    "MEMWAL_DB_URL points at the team's PostgreSQL server",
    "Café meetings happen at the naïve corner",
    "The running shoes are in locker 12",
    "Ponies and horses are kept in the north stable",
    "Use snake_case for Python identifiers, camelCase in JS",
    "Reviews of the deploy pipeline happen quarterly",
    "The coffee order: two lattes, one espresso, one more coffee",
    "The kestrel server uses port 8443 in us-east-1",
    "Exactly one general rule, and a generous one",
]
QUERIES = [
    ["coffee"],
    ["deploy", "fridays"],
    ["password", "monday"],
    ["memwal_db_url"],
    ["cafe", "naive"],
    ["running", "shoes"],
    ["pony"],
    ["reviews", "quarterly", "room"],
    ["snake_case", "identifiers"],
    ["the", "office"],
    ["12"],
    ["coffee", "coffee"],
    ["use", "port"],
    ["mondays", "exact"],
    ["generals"],
]


async def _answers(store: Store) -> list[list[tuple[str, float]]]:
    await store.write(lambda w: [remember(w, "alice", "default", t, at=1e9 + i) for i, t in enumerate(CORPUS)])

    def search(r):  # type: ignore[no-untyped-def]
        lane = lane_of(r, "alice", "default")
        answers = []
        for terms in QUERIES:
            found, _ = r.text_search([lane], terms, 50)
            rows = r.memories_by_pk([m.pk for m in found])
            answers.append([(rows[m.pk].body, m.strength) for m in found])
        return answers

    return await store.read(search)


async def test_bm25_agrees_with_sqlite(tmp_path: Path, pg_url: str) -> None:
    sqlite = open_store(load_settings(db_path=tmp_path / "memwal.db"))
    postgres = open_store(load_settings(db_url=pg_url))
    await sqlite.open()
    await postgres.open()
    try:
        expected, got = await _answers(sqlite), await _answers(postgres)
    finally:
        await sqlite.close()
        await postgres.close()
    for terms, want, have in zip(QUERIES, expected, got):
        assert want, terms  # every query finds something, or it tests nothing
        assert [body for body, _ in have] == [body for body, _ in want], terms
        assert [s for _, s in have] == pytest.approx([s for _, s in want], rel=1e-9), terms
