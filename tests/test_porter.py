"""PostgreSQL stems words as SQLite's FTS5 `porter` tokenizer does (store/postgres/porter.py), so
a memory's word score is the same on both backends. Checked against FTS5 itself: every word of
the repository's data sets and docs, and every suffix of Porter's rules on many stems."""

from __future__ import annotations

import itertools
from pathlib import Path

from memwal_mcp.store.postgres import porter, words
from memwal_mcp.store.sqlite.connection import sqlite_module

ROOT = Path(__file__).parent.parent
SUFFIXES = (
    "s es sses ies ed eed ing ational tional enci anci izer logi bli abli alli entli eli ousli ization ation ator"
    " alism iveness fulness ousness aliti iviti biliti icate ative alize iciti ical ful ness al ance ence er ic"
    " able ible ant ement ment ent ion sion tion ou ism ate iti ous ive ize e ll y ly ily ying yed"
).split()
STEMS = (
    "rel cond hop tap fil fail gener run sing pl troubl siz agre feed bled ski sky by ay oy happ formal sens digit"
    " rat activ hope control roll fall cry try play say dy lie tie eye mess caress pony ti uy ion s ss x yy aa ee"
    " oo ab ba un pre re in"
).split()


def _fts5_stems(tokens: list[str]) -> list[str | None]:
    """FTS5's porter stem of each (single, folded) token."""
    conn = sqlite_module().connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
    conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", [(i + 1, token) for i, token in enumerate(tokens)])
    found = {doc: term for doc, term in conn.execute("SELECT doc, term FROM v")}
    conn.close()
    return [found.get(i + 1) for i in range(len(tokens))]


def _vocabulary() -> list[str]:
    files = itertools.chain(ROOT.glob("benchmarks/data/*.jsonl"), ROOT.glob("*.md"), ROOT.glob("benchmarks/*.md"))
    found = {token for path in files for token in words.raw_tokens(path.read_text(encoding="utf-8"))}
    found |= {stem + suffix for stem in STEMS for suffix in SUFFIXES}
    found |= {stem + a + b for stem in STEMS[:20] for a in SUFFIXES[:12] for b in SUFFIXES[:12]}
    found |= {"x" * 64, "x" * 65 + "ing", "ied", "aed", "sses", "ies", "naïve", "мыслей", "日本語です"}
    return sorted(found)


def test_every_word_stems_as_fts5_stems_it() -> None:
    folded = [words.raw_tokens(token) for token in _vocabulary()]
    vocabulary = sorted({tokens[0] for tokens in folded if len(tokens) == 1})
    assert len(vocabulary) > 15_000  # the data sets and docs are really read
    expected = _fts5_stems(vocabulary)
    differ = [
        (token, want, porter.stem(token)) for token, want in zip(vocabulary, expected) if porter.stem(token) != want
    ]
    assert differ == []


def test_the_stems_snowball_gave_otherwise_are_fts5s_now() -> None:
    assert words.tokens("uses days Mondays technology incredibly one deploys") == [
        "us", "dai", "mondai", "technolog", "incred", "on", "deploi",
    ]  # fmt: skip
    assert words.tokens("µs ς") == ["μ", "σ"]  # unicode61's folds
