"""Words as the SQLite backend's FTS5 tokenizer sees them, for PostgreSQL's tsvector.

SQLite indexes bodies with `porter unicode61 remove_diacritics 2`. To give a memory the same
word score on both backends, this module tokenizes in Python the way unicode61 does, and
PostgreSQL only stores and matches the result:

- a token is a run of letters, digits and private-use characters (Unicode L*, N*, Co); a
  combining diacritic (U+0300-U+036F) belongs to its token and is dropped; everything else,
  underscore and other combining marks included, separates tokens;
- case is folded (str.lower) and diacritics are removed from Latin letters ("é" -> "e"), not
  from other scripts (Greek tonos stays, as in unicode61);
- tokens are stemmed by Porter's algorithm exactly as FTS5's `porter` tokenizer applies it
  (porter.py), with no stop words.

Why not PostgreSQL's own parser: under a C locale (pgserver's, and common on servers) it
treats non-ASCII letters by the locale's rules, keeps `v2.3` or `foo_bar` as one token where
unicode61 makes two or three, and it cannot fold diacritics without the `unaccent` extension
(not available in pgserver). Nor its `english` stemmer (Snowball, which this module used up to
words VERSION 1): it stems about 4 % of words differently ("use" / "us", "days" / "day"), which
reordered 12 of 100 recalls against SQLite's at 100k. A memory's words are marked with the
VERSION that made them (`memories.words_version`): a database made by an older version is
re-tokenized when the store opens (words_pass.py).

What still differs from unicode61, whose Unicode tables are older than Python's: 1,232 of the
8,160 code points below U+2000 (839 unassigned in Python's tables, 196 combining marks of other
scripts than Latin, 141 capitals unicode61 does not fold, a few letters); every word of the
repository's data and docs gets the same tokens as FTS5 (tests/test_porter.py).

A tsvector keeps at most 256 positions per word and positions up to 16383: a word repeated
more often counts 256 times (BM25 has saturated long before), and phrase positions past the
16383rd token are clamped. A token over 2046 bytes (a long unbroken blob) is counted in the
length but not indexed: PostgreSQL refuses such a lexeme.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

from . import porter

# What the stems of a memory's tsvector are: 1 Snowball English, 2 FTS5's Porter (porter.py).
VERSION = 2
# FTS5's bm25() constants.
K1 = 1.2
B = 0.75
MAX_POSITIONS = 256
MAX_POSITION = 16383
MAX_LEXEME_BYTES = 2046


def _is_diacritic(char: str) -> bool:
    return 0x300 <= ord(char) <= 0x36F


def _is_token_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co" or _is_diacritic(char)


def _is_latin(char: str) -> bool:
    code = ord(char)
    return code < 0x250 or 0x1E00 <= code < 0x1F00


# Where unicode61 folds a letter of a common script to another than str.lower() gives.
_FOLDS = {"µ": "μ", "ς": "σ"}


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """Lower case, and a Latin letter without its diacritics ("É" -> "e", "İ" -> "i")."""
    out = []
    for lowered in _FOLDS.get(char, char).lower():
        if _is_diacritic(lowered):
            continue
        parts = unicodedata.normalize("NFD", lowered)
        if len(parts) > 1 and _is_latin(parts[0]) and all(_is_diacritic(p) for p in parts[1:]):
            out.append(parts[0])
        else:
            out.append(lowered)
    return "".join(out)


def raw_tokens(text: str) -> list[str]:
    """Folded tokens before stemming, in order."""
    found: list[str] = []
    current: list[str] = []
    for char in text:
        if _is_token_char(char):
            current.append(_fold_char(char))
        elif current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return [token for token in found if token]


def tokens(text: str) -> list[str]:
    """The stemmed tokens of a text, in order: what the index holds and a query looks for."""
    return [_stem(token) for token in raw_tokens(text)]


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    return porter.stem(token)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def document(text: str) -> tuple[str, int]:
    """(tsvector literal with positions, token count) of a body."""
    stems = tokens(text)
    positions: dict[str, list[int]] = {}
    for i, stem in enumerate(stems, start=1):
        if len(stem.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        where = positions.setdefault(stem, [])
        position = min(i, MAX_POSITION)
        if len(where) < MAX_POSITIONS and (not where or where[-1] != position):
            where.append(position)
    literal = " ".join(f"{_quoted(stem)}:{','.join(map(str, where))}" for stem, where in positions.items())
    return literal, len(stems)


def phrases(terms: Sequence[str]) -> list[list[str]]:
    """Each query term as the phrase of tokens it makes (FTS5 quotes a term: a term that
    tokenizes to several tokens is a phrase; one that tokenizes to none matches nothing)."""
    return [[t for t in tokens(term) if len(t.encode("utf-8")) <= MAX_LEXEME_BYTES] for term in terms]


def phrase_query(phrase: Sequence[str]) -> str:
    """tsquery of one phrase: its tokens one after another."""
    return " <-> ".join(_quoted(token) for token in phrase)


def any_query(phrase_list: Sequence[Sequence[str]]) -> str | None:
    """tsquery matching a body that holds any of the phrases; None when none has a token."""
    parts = [f"({phrase_query(p)})" for p in dict.fromkeys(tuple(p) for p in phrase_list) if p]
    return " | ".join(parts) if parts else None


def frequency(phrase: Sequence[str], where: Mapping[str, Sequence[int]]) -> int:
    """Instances of the phrase in a body, from its words' positions."""
    if not phrase:
        return 0
    first = where.get(phrase[0], ())
    if len(phrase) == 1:
        return len(first)
    rest = [set(where.get(token, ())) for token in phrase[1:]]
    return sum(1 for start in first if all(start + i + 1 in rest[i] for i in range(len(rest))))


def positions_of(stems: Sequence[str]) -> dict[str, list[int]]:
    """Word -> its positions (1-based) in a tokenized text, unclamped."""
    where: dict[str, list[int]] = {}
    for i, stem in enumerate(stems, start=1):
        where.setdefault(stem, []).append(i)
    return where


def idf(rows: int, hits: int) -> float:
    """FTS5's idf: never zero or negative (a word in most rows still counts a little)."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


def bm25(idfs: Sequence[float], freqs: Sequence[int], length: float, average: float) -> float:
    """Okapi BM25 as FTS5's bm25() computes it (positive: higher is better)."""
    score = 0.0
    for weight, f in zip(idfs, freqs):
        if f:
            score += weight * (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / average))
    return score


def ceiling(idfs: Sequence[float], phrase_list: Sequence[Sequence[str]]) -> float:
    """The most BM25 a memory could have for the query: every term at a saturating frequency."""
    return (K1 + 1.0) * sum(weight for weight, phrase in zip(idfs, phrase_list) if phrase)
