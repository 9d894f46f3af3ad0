"""Word search over a lane's live memories: Okapi BM25 per lane, as FTS5's bm25() on SQLite.

The statistics are the lane's own, so a memory's strength never depends on what the owner keeps
in other namespaces: the document count and total tokens are `lanes.live_count` and
`lanes.live_tokens`, how many memories hold a word is `lane_terms.docs` (both kept by
triggers, migration 001), and a phrase's document count (a query term that tokenizes to
several tokens, like `foo_bar`) is counted by matching it in the lane. The GIN index on
`memories.tsv` finds the memories holding any query word, and the score is computed term for
term as fts5_aux.c does, so phrases and repeated terms count as they do there.

A search reads the words (`tsv::text`: unnesting a tsvector row by row costs the server about
10 µs a memory here) of the memories holding the rarest query phrases first and scores them in
Python, and reads no further once what is left could not enter the top (MaxScore, in
_best_of_lane): the memories holding only a query's common words, most of the matches, are
never read. `strengths` scores named memories from their unnested words, the same way.
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


# A word search whose query words are held by at most this many memories in all reads them in
# one query.
READ_AT_ONCE = 2000


def _holders(
    conn: Connection, lane: int, wanted: Sequence[Sequence[str]], done: Sequence[Sequence[str]]
) -> list[tuple[int, int, str]]:
    """(pk, tokens, words as text) of the lane's live memories holding a `wanted` phrase and no
    `done` one (those were read already)."""
    sql = "SELECT pk, doc_len, tsv::text FROM memories WHERE lane_id = %s AND status = 'live' AND tsv @@ %s::tsquery"
    params: tuple[object, ...] = (lane, words.any_query(wanted))
    before = words.any_query(done)
    if before is not None:
        sql += " AND NOT tsv @@ %s::tsquery"
        params += (before,)
    return [(int(pk), int(length), text) for pk, length, text in conn.execute(sql, params)]


def _positions(text: str, lexemes: Sequence[str]) -> dict[str, list[int]]:
    """The positions of these words in a tsvector's text (`'kiwi':1,5 'grow':2`). A lexeme is
    letters and digits only (words.py), so `'kiwi':` can only be that word's entry."""
    where: dict[str, list[int]] = {}
    for lexeme in lexemes:
        key = f"'{lexeme}':"
        start = text.find(key)
        if start < 0:
            continue
        start += len(key)
        stop = text.find(" ", start)
        listed = text[start:] if stop < 0 else text[start:stop]
        where[lexeme] = [int(p.rstrip("ABCD")) for p in listed.split(",")]
    return where


def _best_of_lane(
    conn: Connection, lane: int, stats: _LaneStats, phrase_list: Sequence[Sequence[str]], limit: int
) -> tuple[dict[int, float], bool]:
    """The lane's `limit` strongest matches (pk -> strength; ties by pk), and True when it has
    no more than those.

    A common word matches much of a lane and adds little: a memory holding only such words
    scores less than their weights' sum, each phrase at most idf × (K1 + 1) each time the query
    names it. So the memories holding the rarest phrases are read and scored first (all their
    words counted); once the `limit`-th of them beats what the phrases not read yet could add
    up to, no other memory can enter, and those are never read (MaxScore)."""
    if stats.rows <= 0 or limit <= 0 or stats.tokens <= 0:
        return {}, True
    average = stats.tokens / stats.rows
    held = _documents_with(conn, lane, phrase_list)
    idfs = [words.idf(stats.rows, hits) for hits in held]
    most: dict[tuple[str, ...], float] = {}
    holding: dict[tuple[str, ...], int] = {}
    for phrase, weight, hits in zip(phrase_list, idfs, held):
        if phrase and hits:  # a phrase no memory holds matches nothing and adds nothing
            most[tuple(phrase)] = most.get(tuple(phrase), 0.0) + weight * (words.K1 + 1.0)
            holding[tuple(phrase)] = hits
    order = sorted(most, key=lambda phrase: (-most[phrase], phrase))
    # Memories holding the first e phrases, at most (one holding two is counted twice).
    reach = [sum(holding[phrase] for phrase in order[:e]) for e in range(len(order) + 1)]

    def enough(after: int) -> int:
        """The first step past `after` that may hold more than `limit` memories; all of them
        when the whole read is small (one query beats several)."""
        if reach[-1] <= READ_AT_ONCE:
            return len(order)
        return next((e for e in range(after + 1, len(order)) if reach[e] > limit), len(order))

    # What the phrases after the first e could add at most, for each e (with a margin for the
    # sums' rounding).
    rest = [sum(most[phrase] for phrase in order[e:]) * (1 + 1e-9) for e in range(len(order) + 1)]
    lexemes = sorted({token for phrase in phrase_list for token in phrase})
    scored: dict[int, float] = {}
    read = 0
    upto = enough(0)
    while read < len(order):
        for pk, length, text in _holders(conn, lane, order[read:upto], order[:read]):
            where = _positions(text, lexemes)
            freqs = [words.frequency(phrase, where) for phrase in phrase_list]
            if any(freqs):
                scored[pk] = words.bm25(idfs, freqs, float(length), average)
        read = upto
        if read < len(order) and len(scored) > limit:
            kept = min(_top(scored, limit).values())
            if kept > rest[read]:
                return _top(scored, limit), False
            # The limit-th strength only grows as more is read: skip to the first phrase
            # after which what is left could not reach it.
            upto = next((e for e in range(read + 1, len(order)) if kept > rest[e]), len(order))
        else:
            upto = enough(read)
    return _top(scored, limit), len(scored) <= limit


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


def search_every_match(
    conn: Connection, lanes: Sequence[int], terms: Sequence[str], limit: int
) -> tuple[list[tuple[int, float]], bool]:
    """search() by scoring every match from its unnested words, as it was done before MaxScore:
    the reference benchmarks.pg_lanes times it against."""
    phrase_list = words.phrases(terms)
    stats = lane_stats(conn, lanes)
    found = [hit for lane in sorted(stats) for hit in _score_lane(conn, lane, stats[lane], phrase_list).items()]
    found.sort(key=lambda hit: (-hit[1], hit[0]))
    return found[:limit], len(found) <= limit


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
