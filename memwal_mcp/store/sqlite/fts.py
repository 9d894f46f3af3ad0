"""One FTS5 table per lane (owner, namespace): the full-text index of its live memories.

Why per lane: FTS5 keeps its BM25 statistics (document count, mean length, how many
documents hold each term) per table, so a memory's word score depends on the table it is in
and nothing else. Per owner, as before, one namespace's words moved every other namespace's
scores: a project recalled in its own namespace ranked worse as the owner's other projects
grew (0.557 -> 0.518 R@5 on a public chat benchmark with nine sibling namespaces). Per lane, a
memory scores the same whatever the owner keeps elsewhere, and `namespace="*"` ranks each
memory by its own namespace's statistics (the score it has when that namespace is recalled
alone). Owners stay walls as before: no table ever holds two owners' rows.

Table names hold a lane's integer id only, never user text.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Sequence

TOKENIZE = "porter unicode61 remove_diacritics 2"
PREFIX = "lane_fts_"


def _name(lane: int) -> str:
    return f"{PREFIX}{int(lane)}"


def secure_delete_supported(conn: sqlite3.Connection) -> bool:
    """FTS5's secure-delete option (SQLite >= 3.44) removes a deleted row's terms at once."""
    (version,) = conn.execute("SELECT sqlite_version()").fetchone()
    return tuple(int(part) for part in version.split(".")[:2]) >= (3, 44)


def create(conn: sqlite3.Connection, lane: int) -> str:
    """The lane's table, filled with its live memories if new. Call inside a write transaction."""
    name = _name(lane)
    if conn.execute("SELECT 1 FROM lane_fts WHERE lane_id = ?", (lane,)).fetchone() is not None:
        return name
    conn.execute("INSERT INTO lane_fts (lane_id) VALUES (?)", (lane,))
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5 (body, tokenize = '{TOKENIZE}')")
    if secure_delete_supported(conn):
        conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('secure-delete', 1)")
    conn.execute(
        f"INSERT INTO {name} (rowid, body) SELECT rowid, body FROM memories WHERE lane_id = ? AND status = 'live'",
        (lane,),
    )
    return name


def create_missing(conn: sqlite3.Connection) -> list[int]:
    """Give every lane its table; the lanes that got one."""
    lanes = [
        lane
        for (lane,) in conn.execute("SELECT id FROM lanes WHERE id NOT IN (SELECT lane_id FROM lane_fts) ORDER BY id")
    ]
    for lane in lanes:
        create(conn, lane)
    return lanes


def move_to_lanes(conn: sqlite3.Connection) -> None:
    """Migration 011: drop the per-owner tables of migration 008 and build one per lane."""
    has_owner_tables = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'owner_fts'"
    ).fetchone()
    if has_owner_tables:
        for (table_id,) in conn.execute("SELECT id FROM owner_fts ORDER BY id").fetchall():
            conn.execute(f"DROP TABLE IF EXISTS owner_fts_{int(table_id)}")
        conn.execute("DROP TABLE owner_fts")
    create_missing(conn)


def _table(conn: sqlite3.Connection, lane: int) -> str:
    if conn.execute("SELECT 1 FROM lane_fts WHERE lane_id = ?", (lane,)).fetchone() is None:
        # every lane gets a table when it is made (jobs.ensure_lane)
        raise LookupError(f"lane {lane} has no full-text table; run `memwal-mcp check`")
    return _name(lane)


def add(conn: sqlite3.Connection, lane: int, rowid: int, body: str) -> None:
    conn.execute(f"INSERT INTO {_table(conn, lane)} (rowid, body) VALUES (?, ?)", (rowid, body))


def replace(conn: sqlite3.Connection, lane: int, rowid: int, body: str) -> None:
    name = _table(conn, lane)
    conn.execute(f"DELETE FROM {name} WHERE rowid = ?", (rowid,))
    conn.execute(f"INSERT INTO {name} (rowid, body) VALUES (?, ?)", (rowid, body))


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
    """(rowid, bm25) of live memories in these lanes matching `match` (from match_expression),
    best first (FTS5's sign: more negative is better), at most `limit`; and True when there
    are no more to find. One query per lane, each scored by its own lane's statistics."""
    registered = tables(conn)
    found: list[tuple[int, float]] = []
    for lane in sorted(set(lanes)):
        name = registered.get(lane)
        if name is not None:  # one more than asked: whether more exist is known without a second query
            found += conn.execute(
                f"SELECT rowid, bm25({name}) AS r FROM {name} WHERE {name} MATCH ? ORDER BY r LIMIT ?",
                (match, limit + 1),
            ).fetchall()
    return heapq.nsmallest(limit, found, key=lambda hit: (hit[1], hit[0])), len(found) <= limit


def tables(conn: sqlite3.Connection) -> dict[int, str]:
    """lane id -> table name, for every lane with a table."""
    return {lane: _name(lane) for (lane,) in conn.execute("SELECT lane_id FROM lane_fts ORDER BY lane_id")}
