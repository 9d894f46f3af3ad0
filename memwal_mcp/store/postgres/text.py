"""Word search over a lane's live memories: Okapi BM25 per lane, as FTS5's bm25() on SQLite.

The statistics are the lane's own, so a memory's strength never depends on what the owner keeps
in other namespaces: the document count and total tokens are `lanes.live_count` and
`lanes.live_tokens`, how many memories hold a word is `lane_terms.docs` (both kept by
triggers, migration 001), and a phrase's document count (a query term that tokenizes to
several tokens, like `foo_bar`) is counted by matching it in the lane. The GIN index on
`memories.tsv` finds the memories holding any query word, and the score is computed term for
term as fts5_aux.c does, so phrases and repeated terms count as they do there.

A search ranks in SQL and scores in Python. The server computes every match's BM25 from how often
it holds each query word (the same float8 operations, in the same order, on the same constants as
words.bm25: the same value) and returns only the best `limit + 1` of each lane, with those counts;
Python scores these from the counts and picks the top. A phrase of several words (`foo_bar`) needs
its words' positions: the server then ranks by a bound (the phrase counted as often as its rarest
word in the memory), and the rows it returns are scored exactly from their positions; when a row
just past them could still beat the last one kept, more rows are fetched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg import Connection

from ...normalize import norm_key
from ..records import QueuedText, Scored
from . import words


@dataclass(frozen=True, slots=True)
class _LaneStats:
    rows: int
    tokens: int


def lane_stats(conn: Connection, lanes: Sequence[int]) -> dict[int, _LaneStats]:
    wanted = sorted(set(lanes))
    if not wanted:
        return {}
    rows = conn.execute("SELECT id, live_count, live_tokens FROM lanes WHERE id = ANY(%s)", (wanted,)).fetchall()
    return {lane: _LaneStats(count, tokens) for lane, count, tokens in rows}


def _documents_with(conn: Connection, lane: int, phrase_list: Sequence[Sequence[str]]) -> list[int]:
    """How many live memories of the lane hold each phrase."""
    single = sorted({p[0] for p in phrase_list if len(p) == 1})
    counts: dict[str, int] = {}
    if single:
        counts = dict(
            conn.execute(
                "SELECT lexeme, docs FROM lane_terms WHERE lane_id = %s AND lexeme = ANY(%s)", (lane, single)
            ).fetchall()
        )
    found: list[int] = []
    for phrase in phrase_list:
        if not phrase:
            found.append(0)
        elif len(phrase) == 1:
            found.append(counts.get(phrase[0], 0))
        else:
            (count,) = conn.execute(
                "SELECT count(*) FROM memories WHERE lane_id = %s AND status = 'live' AND tsv @@ %s::tsquery",
                (lane, words.phrase_query(phrase)),
            ).fetchone() or (0,)
            found.append(count)
    return found


def _matches(
    conn: Connection, lane: int, phrase_list: Sequence[Sequence[str]], pks: Sequence[int] | None
) -> dict[int, tuple[int, dict[str, list[int]]]]:
    """pk -> (tokens, positions of each query word) of the lane's live memories holding a phrase."""
    query = words.any_query(phrase_list)
    if query is None:
        return {}
    lexemes = sorted({token for phrase in phrase_list for token in phrase})
    sql = (
        "SELECT m.pk, m.doc_len, u.lexeme, u.positions FROM memories m CROSS JOIN LATERAL unnest(m.tsv) u"
        " WHERE m.lane_id = %s AND m.status = 'live' AND m.tsv @@ %s::tsquery AND u.lexeme = ANY(%s)"
    )
    params: tuple[object, ...] = (lane, query, lexemes)
    if pks is not None:
        sql += " AND m.pk = ANY(%s)"
        params += (list(pks),)
    found: dict[int, tuple[int, dict[str, list[int]]]] = {}
    for pk, length, lexeme, positions in conn.execute(sql, params):
        found.setdefault(pk, (length, {}))[1][lexeme] = positions
    return found


def _score_lane(
    conn: Connection,
    lane: int,
    stats: _LaneStats,
    phrase_list: Sequence[Sequence[str]],
    pks: Sequence[int] | None = None,
) -> dict[int, float]:
    if stats.rows <= 0:
        return {}
    matched = _matches(conn, lane, phrase_list, pks)
    if not matched:
        return {}
    idfs = [words.idf(stats.rows, hits) for hits in _documents_with(conn, lane, phrase_list)]
    average = stats.tokens / stats.rows
    out: dict[int, float] = {}
    for pk, (length, where) in matched.items():
        freqs = [words.frequency(phrase, where) for phrase in phrase_list]
        if any(freqs) and average > 0:
            out[pk] = words.bm25(idfs, freqs, float(length), average)
    return out


def _ranked_sql(phrase_list: Sequence[Sequence[str]], lexemes: Sequence[str]) -> str:
    """The lane's matches by BM25 (a bound for phrases of several words), best first, with how
    often each memory holds each query word. Every operation is words.bm25's, in its order."""
    counts = ", ".join(
        f"coalesce(sum(array_length(u.positions, 1)) FILTER (WHERE u.lexeme = %(x{j})s), 0)::float8 AS f{j}"
        for j in range(len(lexemes))
    )
    column = {lexeme: f"c.f{j}" for j, lexeme in enumerate(lexemes)}
    score = "0.0::float8"
    for p, phrase in enumerate(phrase_list):
        if not phrase:
            continue
        f = column[phrase[0]] if len(phrase) == 1 else f"least({', '.join(column[t] for t in phrase)})"
        score += f" + %(w{p})s * ({f} * %(k1p1)s) / ({f} + %(k1)s * (%(omb)s + %(b)s * m.doc_len::float8 / %(avg)s))"
    picked = ", ".join(f"c.f{j}" for j in range(len(lexemes)))
    return (
        f"SELECT m.pk, m.doc_len, {picked} FROM memories m CROSS JOIN LATERAL (SELECT {counts}"
        " FROM unnest(m.tsv) u WHERE u.lexeme = ANY(%(lexemes)s)) c"
        " WHERE m.lane_id = %(lane)s AND m.status = 'live' AND m.tsv @@ %(query)s::tsquery"
        f" ORDER BY {score} DESC, m.pk LIMIT %(limit)s"
    )


def _best_of_lane(
    conn: Connection, lane: int, stats: _LaneStats, phrase_list: Sequence[Sequence[str]], limit: int
) -> tuple[dict[int, float], bool]:
    """The lane's `limit` strongest matches (pk -> strength; ties by pk), and True when it has
    no more than those."""
    query = words.any_query(phrase_list)
    if query is None or stats.rows <= 0 or limit <= 0:
        return {}, True
    average = stats.tokens / stats.rows
    if average <= 0:
        return {}, True
    idfs = [words.idf(stats.rows, hits) for hits in _documents_with(conn, lane, phrase_list)]
    lexemes = sorted({token for phrase in phrase_list for token in phrase})
    params: dict[str, object] = {
        "lane": lane,
        "query": query,
        "lexemes": lexemes,
        "k1p1": words.K1 + 1.0,
        "k1": words.K1,
        "omb": 1 - words.B,
        "b": words.B,
        "avg": average,
        **{f"x{j}": lexeme for j, lexeme in enumerate(lexemes)},
        **{f"w{p}": weight for p, weight in enumerate(idfs)},
    }
    sql = _ranked_sql(phrase_list, lexemes)
    exact = all(len(phrase) <= 1 for phrase in phrase_list)
    want = limit + 1
    while True:
        rows = conn.execute(sql, {**params, "limit": want}).fetchall()
        if exact:  # the counts are the frequencies: score them as the server ranked them
            where = lexemes
            scored = {
                int(pk): words.bm25(
                    idfs, [int(row[where.index(p[0])]) if p else 0 for p in phrase_list], float(length), average
                )
                for pk, length, *row in rows
            }
            return _top(scored, limit), len(rows) <= limit
        bounds = {
            int(pk): words.bm25(
                idfs,
                [min(int(row[lexemes.index(t)]) for t in p) if p else 0 for p in phrase_list],
                float(length),
                average,
            )
            for pk, length, *row in rows
        }
        matched = _matches(conn, lane, phrase_list, list(bounds))
        scored = {}
        for pk, (length, positions) in matched.items():
            freqs = [words.frequency(phrase, positions) for phrase in phrase_list]
            if any(freqs):
                scored[pk] = words.bm25(idfs, freqs, float(length), average)
        best = _top(scored, limit)
        if len(rows) < want:  # every match was fetched
            return best, len(scored) <= limit
        # A match not fetched scores at most the last bound fetched: it cannot beat a kept
        # strength above that.
        if len(best) == limit and min(best.values()) > min(bounds.values()):
            return best, False
        want *= 4


def _top(scored: dict[int, float], limit: int) -> dict[int, float]:
    return dict(sorted(scored.items(), key=lambda hit: (-hit[1], hit[0]))[:limit])


def search(
    conn: Connection, lanes: Sequence[int], terms: Sequence[str], limit: int
) -> tuple[list[tuple[int, float]], bool]:
    """(pk, strength) of live memories in these lanes holding any term, strongest first (ties
    by pk, as SQLite orders them), at most `limit`; and True when there are no more."""
    phrase_list = words.phrases(terms)
    stats = lane_stats(conn, lanes)
    found: list[tuple[int, float]] = []
    exhausted = True
    for lane in sorted(stats):
        best, complete = _best_of_lane(conn, lane, stats[lane], phrase_list, limit)
        found += best.items()
        exhausted = exhausted and complete
    found.sort(key=lambda hit: (-hit[1], hit[0]))
    return found[:limit], exhausted and len(found) <= limit


def strengths(conn: Connection, lanes: Sequence[int], terms: Sequence[str], pks: Sequence[int]) -> dict[int, float]:
    phrase_list = words.phrases(terms)
    stats = lane_stats(conn, lanes)
    out: dict[int, float] = {}
    for lane in sorted(stats):
        out.update(_score_lane(conn, lane, stats[lane], phrase_list, pks))
    return out


def _live_norm_keys(conn: Connection, lane: int, keys: Sequence[str]) -> set[str]:
    rows = conn.execute(
        "SELECT DISTINCT norm_key FROM memories WHERE lane_id = %s AND status = 'live' AND norm_key = ANY(%s)",
        (lane, sorted(set(keys))),
    ).fetchall()
    return {key for (key,) in rows}


def score_queued(
    conn: Connection, lanes: Sequence[int], terms: Sequence[str], texts: Sequence[QueuedText], repeats_fold: bool
) -> Scored:
    """What each queued text would score as a memory of its lane, over the statistics the lanes
    will have once the texts are in, and each searched lane's ceiling (see the SQLite backend's
    unindexed_fts.score_queued, which this follows step for step)."""
    keys = [norm_key(item.text) for item in texts]
    live: dict[int, set[str]] = {}
    if repeats_fold:
        for lane in {item.lane for item in texts}:
            live[lane] = _live_norm_keys(conn, lane, [k for k, item in zip(keys, texts) if item.lane == lane])
    added: list[bool] = []
    seen: set[tuple[int, str]] = set()
    for item, key in zip(texts, keys):
        repeat = repeats_fold and (key in live.get(item.lane, set()) or (item.lane, key) in seen)
        seen.add((item.lane, key))
        added.append(not repeat)
    grows: dict[int, tuple[int, int]] = {}
    for item, new in zip(texts, added):
        if new:
            rows, chars = grows.get(item.lane, (0, 0))
            grows[item.lane] = (rows + 1, chars + len(item.text))
    searched = set(lanes)
    stats = lane_stats(conn, sorted(searched | {item.lane for item in texts})) if terms else {}
    if not stats:
        return Scored([None] * len(texts), keys, grows, {})

    phrase_list = words.phrases(terms)
    tokenized = [words.tokens(item.text) for item in texts]
    freqs = [[words.frequency(phrase, words.positions_of(stems)) for phrase in phrase_list] for stems in tokenized]
    out: list[float | None] = [None] * len(texts)
    ceilings: dict[int, float] = {}
    for lane in sorted(stats):
        mine = [i for i, item in enumerate(texts) if item.lane == lane]
        rows = stats[lane].rows + sum(1 for i in mine if added[i])
        tokens = stats[lane].tokens + sum(len(tokenized[i]) for i in mine if added[i])
        if rows == 0:
            continue
        idfs: list[float] = []
        for p, indexed in enumerate(_documents_with(conn, lane, phrase_list)):
            hits = indexed + sum(1 for i in mine if added[i] and freqs[i][p])
            idfs.append(words.idf(rows, hits))
        if lane in searched:
            ceilings[lane] = words.ceiling(idfs, phrase_list)
        average = tokens / rows
        for i in mine:
            if average > 0.0 and any(freqs[i]):
                out[i] = words.bm25(idfs, freqs[i], float(len(tokenized[i])), average)
    return Scored(out, keys, grows, ceilings)
