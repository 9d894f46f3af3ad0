"""One FTS5 table per owner: the full-text index of that owner's live memories.

Why per owner and not one table for everyone: FTS5 keeps its BM25 statistics
(document count, mean length, term frequencies) per table. In a shared table one
owner's words moved another owner's scores -- a side channel across owners -- and
every search had to join each match back to `memories` to drop other lanes' rows,
which cost 3x the search itself at 100k memories (benchmarks/README.md).

Why not per lane: the same text must score the same in every namespace of an owner,
and `namespace="*"` ranks all of them together. Each row carries its lane as a
second column (`l<lane id>`, weight 0 in bm25, so it never changes a score), so a
search limited to some of the owner's namespaces can filter on it.

Table names hold an integer id from `owner_fts` only, never user text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

TOKENIZE = "porter unicode61 remove_diacritics 2"
PREFIX = "owner_fts_"
# Over-fetch from the owner's whole table while the wanted lanes hold at least 1/4 of it.
MAX_OVERFETCH = 4


def _name(table_id: int) -> str:
    return f"{PREFIX}{int(table_id)}"


def lane_token(lane: int) -> str:
    return f"l{int(lane)}"


def secure_delete_supported(conn: sqlite3.Connection) -> bool:
    """FTS5's secure-delete option (SQLite >= 3.44) removes a deleted row's terms at once."""
    (version,) = conn.execute("SELECT sqlite_version()").fetchone()
    return tuple(int(part) for part in version.split(".")[:2]) >= (3, 44)


def create(conn: sqlite3.Connection, owner: str) -> str:
    """The owner's table, filled with their live memories if new. Call inside a write transaction."""
    row = conn.execute("SELECT id FROM owner_fts WHERE owner = ?", (owner,)).fetchone()
    if row is not None:
        return _name(row[0])
    table_id = conn.execute("INSERT INTO owner_fts (owner) VALUES (?)", (owner,)).lastrowid
    assert table_id is not None  # an INSERT always sets it
    name = _name(table_id)
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5 (body, lane, tokenize = '{TOKENIZE}')")
    if secure_delete_supported(conn):
        conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('secure-delete', 1)")
    conn.execute(
        f"INSERT INTO {name} (rowid, body, lane) SELECT rowid, body, 'l' || lane_id FROM memories"
        " WHERE owner = ? AND status = 'live'",
        (owner,),
    )
    return name


def create_missing(conn: sqlite3.Connection) -> list[str]:
    """Give every owner their table (databases from before migration 008); the owners that got one."""
    owners = [
        owner
        for (owner,) in conn.execute(
            "SELECT DISTINCT owner FROM lanes WHERE owner NOT IN (SELECT owner FROM owner_fts) ORDER BY owner"
        )
    ]
    for owner in owners:
        create(conn, owner)
    return owners


def _table(conn: sqlite3.Connection, lane: int) -> str:
    """The table of the lane's owner."""
    row = conn.execute(
        "SELECT f.id FROM lanes l JOIN owner_fts f ON f.owner = l.owner WHERE l.id = ?", (lane,)
    ).fetchone()
    if row is None:  # every lane's owner gets a table when the lane is made (jobs.ensure_lane)
        raise LookupError(f"lane {lane} has no full-text table; run `memwal-mcp check`")
    return _name(row[0])


def add(conn: sqlite3.Connection, lane: int, rowid: int, body: str) -> None:
    conn.execute(
        f"INSERT INTO {_table(conn, lane)} (rowid, body, lane) VALUES (?, ?, ?)", (rowid, body, lane_token(lane))
    )


def replace(conn: sqlite3.Connection, lane: int, rowid: int, body: str) -> None:
    name = _table(conn, lane)
    conn.execute(f"DELETE FROM {name} WHERE rowid = ?", (rowid,))
    conn.execute(f"INSERT INTO {name} (rowid, body, lane) VALUES (?, ?, ?)", (rowid, body, lane_token(lane)))


def _ensure_secure_delete(conn: sqlite3.Connection, name: str) -> None:
    """Turn the option on for a table made before this SQLite had it (create() sets it on new
    ones): without it a deleted row's terms stay in the index until segments merge."""
    row = conn.execute(f"SELECT v FROM {name}_config WHERE k = 'secure-delete'").fetchone()
    if not row or not row[0]:
        conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('secure-delete', 1)")


def remove(conn: sqlite3.Connection, lane: int, rowids: Sequence[int], optimize: bool = False) -> None:
    """Drop rows; `optimize` merges the index so deleted terms leave it (without secure-delete)."""
    name = _table(conn, lane)
    if not optimize and secure_delete_supported(conn):
        _ensure_secure_delete(conn, name)
    conn.executemany(f"DELETE FROM {name} WHERE rowid = ?", [(rowid,) for rowid in rowids])
    if optimize:
        conn.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 OR of the terms, each double-quoted: quotes, AND/OR/NEAR, `*`, `:`, parentheses
    and column filters in a user's words are words to look for, never syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def search(
    conn: sqlite3.Connection, lanes: Sequence[int], match: str, limit: int
) -> tuple[list[tuple[int, float]], bool]:
    """(rowid, bm25) of live memories in these lanes (all of one owner) matching `match`, best
    first, at most `limit`; and True when there are no more to find.

    `match` must come from recall.lexical.fts_query, which quotes every user token.
    In all of an owner's namespaces the search is one FTS5 query. In some of them, a
    lane filter inside FTS5 costs a merge with the lane's whole doclist (+70 % at 100k
    memories), so while the other namespaces are small the search over-fetches from
    the whole table and drops their rows instead.
    """
    wanted = set(lanes)
    rows = (
        conn.execute(
            "SELECT f.id, l.id, l.live_count FROM lanes l JOIN owner_fts f ON f.owner = l.owner"
            " WHERE l.owner = (SELECT owner FROM lanes WHERE id = ?)",
            (lanes[0],),
        ).fetchall()
        if lanes
        else []
    )
    if not rows:
        return [], True
    name = _name(rows[0][0])
    owner_live = sum(count for _, _, count in rows)
    wanted_live = sum(count for _, lane, count in rows if lane in wanted)
    sql = f"SELECT rowid, bm25({name}, 1.0, 0.0) AS r FROM {name} WHERE {name} MATCH ? ORDER BY r LIMIT ?"
    if wanted_live >= owner_live:
        found = conn.execute(sql, (f"body : ({match})", limit)).fetchall()
        return found, len(found) < limit
    if wanted_live * MAX_OVERFETCH >= owner_live:
        fetch = -(-limit * owner_live // max(1, wanted_live)) + 1
        while True:  # the other lanes took more than their share of the best: fetch deeper
            found = conn.execute(sql, (f"body : ({match})", fetch)).fetchall()
            keep = _in_lanes(conn, [rowid for rowid, _ in found], wanted)
            hits = [hit for hit in found if hit[0] in keep]
            if len(found) < fetch:
                return hits[:limit], len(hits) <= limit
            if len(hits) >= limit:
                return hits[:limit], False
            fetch *= 2
    only = "lane : (" + " OR ".join(f'"{lane_token(lane)}"' for lane in sorted(wanted)) + ")"
    found = conn.execute(sql, (f"{only} AND body : ({match})", limit)).fetchall()
    return found, len(found) < limit


def _in_lanes(conn: sqlite3.Connection, rowids: Sequence[int], lanes: set[int]) -> set[int]:
    """The rowids whose memory is in one of the lanes: looked up by rowid (a lane condition in
    SQL would make SQLite scan the lane's index instead)."""
    if not rowids:
        return set()
    marks = ",".join("?" * len(rowids))
    return {
        rowid
        for rowid, lane in conn.execute(f"SELECT rowid, lane_id FROM memories WHERE rowid IN ({marks})", tuple(rowids))
        if lane in lanes
    }


def tables(conn: sqlite3.Connection) -> dict[str, str]:
    """owner -> table name, for every owner with a table."""
    return {owner: _name(table_id) for table_id, owner in conn.execute("SELECT id, owner FROM owner_fts ORDER BY id")}
