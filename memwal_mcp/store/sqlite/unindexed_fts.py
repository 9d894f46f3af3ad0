"""BM25 for texts a lane's full-text table does not hold yet: queued remember jobs.

Read-your-writes scores a queued fact itself, and it must score it exactly as the memory it
will become: otherwise `min_score` and the ranking flip when the worker gets to it. So this
is FTS5's own bm25() (fts5_aux.c), term for term, over the statistics the fact's lane's table
will have once the queued facts are in it -- its row and token totals and each query phrase's
document count, plus those of the queued facts that will become memories (a repeat of a
live memory's normalized text becomes an occurrence, not a row). Tokens come from FTS5
itself, in a scratch in-memory table with the same tokenizer, so stemming, case and
diacritic folding are the index's.

Only the queued facts given are counted in: with a backlog larger than a recall examines
(or queued in namespaces it does not search), the figures are those of a partial view.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence

from ...normalize import norm_key
from ..records import QueuedText, Scored
from . import fts, memories
from .connection import sqlite_module

# FTS5's bm25() constants.
K1 = 1.2
B = 0.75
_AVERAGES_ID = 1  # FTS5_AVERAGES_ROWID: the %_data record with the row count and per-column token totals


def _varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers (big-endian groups of 7 bits; a 9th byte has 8)."""
    values: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


def _totals(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """(rows, tokens over all columns) of an FTS5 table, as bm25() reads them."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (_AVERAGES_ID,)).fetchone()
    values = _varints(row[0]) if row and row[0] else []
    return (values[0], sum(values[1:])) if values else (0, 0)


class _Scratch:
    """An in-memory FTS5 table with the index's tokenizer, to see texts as the index would."""

    def __init__(self) -> None:
        self.conn = sqlite_module().connect(":memory:", isolation_level=None)
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = '{fts.TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE tv USING fts5vocab (t, instance)")

    def close(self) -> None:
        self.conn.close()

    def load(self, bodies: Sequence[str]) -> None:
        """The bodies as rows 1..n, replacing what was there."""
        self.conn.execute("BEGIN")
        self.conn.execute("DELETE FROM t")
        self.conn.executemany(
            "INSERT INTO t (rowid, body) VALUES (?, ?)", [(i + 1, body) for i, body in enumerate(bodies)]
        )
        self.conn.execute("COMMIT")

    def tokens(self) -> dict[int, list[str]]:
        """Each row's body tokens, in order."""
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in self.conn.execute("SELECT term, doc, offset FROM tv WHERE col = 'body'"):
            found.setdefault(doc, []).append((offset, term))
        return {doc: [term for _, term in sorted(items)] for doc, items in found.items()}

    def sizes(self) -> dict[int, int]:
        """Tokens per row (bm25's document length)."""
        return {doc: sum(_varints(size)) for doc, size in self.conn.execute("SELECT id, sz FROM t_docsize")}

    def frequencies(self, phrase: Sequence[str]) -> dict[int, int]:
        """Row -> instances of the phrase (consecutive tokens) in the body."""
        positions: list[dict[int, set[int]]] = []
        for token in phrase:
            where: dict[int, set[int]] = {}
            for doc, offset in self.conn.execute(
                "SELECT doc, offset FROM tv WHERE term = ? AND col = 'body'", (token,)
            ):
                where.setdefault(doc, set()).add(offset)
            positions.append(where)
        counts: dict[int, int] = {}
        for doc, starts in positions[0].items():
            n = sum(1 for start in starts if all(start + i in positions[i].get(doc, ()) for i in range(1, len(phrase))))
            if n:
                counts[doc] = n
        return counts


_terms_scratch = threading.local()


def _phrases(terms: Sequence[str]) -> list[list[str]]:
    """Each term's tokens as the index's tokenizer makes them. Every recall asks this (for the
    lane's ceiling, with nothing queued too), so each thread keeps one scratch table for it:
    making one took a quarter of a millisecond, a quarter of what the rest of this costs. It
    only ever holds a query's terms (queued texts get a scratch of their own, freed after)."""
    scratch: _Scratch | None = getattr(_terms_scratch, "scratch", None)
    if scratch is None:
        scratch = _terms_scratch.scratch = _Scratch()
    scratch.load(list(terms))
    phrase_of = scratch.tokens()
    return [phrase_of.get(i + 1, []) for i in range(len(terms))]


def _documents_with(
    conn: sqlite3.Connection, table: str, terms: Sequence[str], phrases: Sequence[list[str]]
) -> list[int]:
    """How many rows of the table hold each term: a one-token term from the table's vocabulary
    (a seek, where counting its matches reads its whole doclist: every recall asks this for
    each query word in each searched lane), a phrase by counting its matches."""
    vocabulary = f"temp.{table}_vocab"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary} USING fts5vocab(main, '{table}', 'row')")
    counts: list[int] = []
    for term, phrase in zip(terms, phrases):
        if not phrase:
            counts.append(0)
        elif len(phrase) == 1:
            row = conn.execute(f"SELECT doc FROM {vocabulary} WHERE term = ?", (phrase[0],)).fetchone()
            counts.append(row[0] if row else 0)
        else:
            (count,) = conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {table} MATCH ?", (fts.match_expression([term]),)
            ).fetchone()
            counts.append(count)
    return counts


def score_queued(
    conn: sqlite3.Connection,
    lanes: Sequence[int],
    terms: Sequence[str],
    texts: Sequence[QueuedText],
    repeats_fold: bool,
) -> Scored:
    """bm25 of each text for the query `terms` (plain words, in the query's order), as if every
    text had been curated into its lane's table, each over its own lane's statistics; and each
    searched lane's ceiling for the query over the same statistics.

    The ceiling is the most BM25 a memory of the lane could have: every term present at a
    frequency that saturates it, (k1 + 1) x the sum of the terms' idf (a term the lane never
    holds counts as in no document; a term with no token, which nothing can match, not at all).
    A strength divided by it is the share of the query's weight a memory matches, whatever the
    lane's size -- the lexical score recall fuses with the cosine.

    `repeats_fold`: curation is on, so a text whose normalized form a live memory of its lane
    (or an earlier text here) already has becomes an occurrence and adds no row."""
    added: list[bool] = []
    seen: set[tuple[int, str]] = set()
    keys = [norm_key(item.text) for item in texts]
    live: dict[int, set[str]] = {}
    if repeats_fold:
        for lane in {item.lane for item in texts}:
            live[lane] = memories.live_norm_keys(conn, lane, [k for k, item in zip(keys, texts) if item.lane == lane])
    for item, key in zip(texts, keys):
        repeat = repeats_fold and (key in live.get(item.lane, set()) or (item.lane, key) in seen)
        seen.add((item.lane, key))
        added.append(not repeat)
    grows: dict[int, tuple[int, int]] = {}
    for item, new in zip(texts, added):
        if new:
            rows, chars = grows.get(item.lane, (0, 0))
            grows[item.lane] = (rows + 1, chars + len(item.text))
    tables = fts.tables(conn) if terms else {}
    if not tables:
        return Scored([None] * len(texts), keys, grows, {})

    phrases = _phrases(terms)
    sizes: dict[int, int] = {}
    freqs: list[dict[int, int]] = [{} for _ in phrases]
    if texts:
        scratch = _Scratch()
        try:
            scratch.load([item.text for item in texts])
            sizes = scratch.sizes()
            freqs = [scratch.frequencies(phrase) if phrase else {} for phrase in phrases]
        finally:
            scratch.close()

    out: list[float | None] = [None] * len(texts)
    ceilings: dict[int, float] = {}
    searched = set(lanes)
    for lane in sorted(searched | {item.lane for item in texts}):
        table = tables.get(lane)
        if table is None:
            continue
        docs = [i + 1 for i, item in enumerate(texts) if item.lane == lane]
        mine = set(docs)
        rows, tokens = _totals(conn, table)
        rows += sum(1 for doc in docs if added[doc - 1])
        tokens += sum(sizes.get(doc, 0) for doc in docs if added[doc - 1])
        if rows == 0:
            continue
        idf: list[float] = []
        for freq, indexed in zip(freqs, _documents_with(conn, table, terms, phrases)):
            hits = indexed + sum(1 for doc in freq if doc in mine and added[doc - 1])
            value = math.log((rows - hits + 0.5) / (hits + 0.5))
            idf.append(value if value > 0.0 else 1e-6)
        if lane in searched:
            ceilings[lane] = (K1 + 1.0) * sum(weight for weight, phrase in zip(idf, phrases) if phrase)
        average = tokens / rows
        for doc in docs:
            if average <= 0.0 or not any(doc in freq for freq in freqs):
                continue
            length = float(sizes.get(doc, 0))
            score = 0.0
            for weight, freq in zip(idf, freqs):
                f = float(freq.get(doc, 0))
                score += weight * (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / average))
            out[doc - 1] = score
    return Scored(out, keys, grows, ceilings)


def bm25_of_rows(conn: sqlite3.Connection, lanes: Sequence[int], match: str, rowids: Sequence[int]) -> dict[int, float]:
    """bm25 of these indexed memories of the lanes for `match` (from fts.match_expression),
    whether or not a top-k word search reached them; absent = no query word in them."""
    tables = fts.tables(conn)
    found: dict[int, float] = {}
    if not rowids:
        return found
    for lane in sorted(set(lanes)):
        table = tables.get(lane)
        if table is None:
            continue
        for start in range(0, len(rowids), 500):
            part = list(rowids[start : start + 500])
            marks = ",".join("?" * len(part))
            found.update(
                conn.execute(
                    f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})",
                    (match, *part),
                ).fetchall()
            )
    return found
