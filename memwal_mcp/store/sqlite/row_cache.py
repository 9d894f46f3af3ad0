"""Memory rows the reader read recently, kept while the database has not changed.

An idle recall reads the rows of ~130 candidates, and most of them were candidates of the
recall before: reading and building them again was a quarter of the search's time after the
query embedding (benchmarks/README.md, the idle recall floor). The rows are kept only while
nothing has been committed: `PRAGMA data_version` (a few microseconds) changes whenever
another connection -- this process's writer or another process -- commits, and this
process's writes also bump `generation` (the store does so after each one), so a forgotten
memory's text is dropped at the next read and never returned from here. Bounded by the
characters held (a few MB), then emptied and refilled rather than tracked entry by entry.
Used on the reader connection's thread only; `invalidate` may come from any thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from ..records import MemoryRow

MAX_CHARS = 4_000_000


class RowCache:
    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self._max_chars = max_chars
        self._rows: dict[int, MemoryRow] = {}
        self._chars = 0
        self._token: tuple[int, int] | None = None
        self.generation = 0  # bumped by this process's writes: an int store, safe from any thread

    def invalidate(self) -> None:
        self.generation += 1

    def rows(
        self,
        conn: sqlite3.Connection,
        rowids: Sequence[int],
        fetch: Callable[[sqlite3.Connection, Sequence[int]], dict[int, MemoryRow]],
    ) -> dict[int, MemoryRow]:
        """The live rows of these rowids, in rowid order; those not held are read with `fetch`. The
        token is read before anything is fetched, so no row is older than the token it is kept under."""
        token = (self.generation, conn.execute("PRAGMA data_version").fetchone()[0])
        if token != self._token:
            self._rows.clear()
            self._chars = 0
            self._token = token
        held = self._rows
        found = {pk: row for pk in rowids if (row := held.get(pk)) is not None}
        missing = [pk for pk in rowids if pk not in found]
        if missing:
            fresh = fetch(conn, missing)
            found.update(fresh)
            added = sum(len(row.body) for row in fresh.values())
            if self._chars + added > self._max_chars:
                held.clear()
                self._chars = 0
            held.update(fresh)
            self._chars += added
        return {pk: found[pk] for pk in sorted(found)}  # rowid order, as the statement returns them
