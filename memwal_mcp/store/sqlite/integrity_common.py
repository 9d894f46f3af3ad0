"""What every integrity check uses: problems capped per code, and whether a table exists.

A broken store can have thousands of rows wrong the same way; `memwal-mcp check` shows at
most MAX_PER_CODE of each code and says how many more. Checks also run against databases
from before some migrations, so they ask whether a table exists before reading it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..records import Problem

# Rows reported per code; the rest are summed up in one more line.
MAX_PER_CODE = 50


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return row is not None


def _cap(problems: Iterable[Problem]) -> Iterator[Problem]:
    """At most MAX_PER_CODE lines per code, then one line saying how many more."""
    by_code: dict[str, list[Problem]] = {}
    for problem in problems:
        by_code.setdefault(problem.code, []).append(problem)
    for code, found in by_code.items():
        yield from found[:MAX_PER_CODE]
        if len(found) > MAX_PER_CODE:
            first = found[0]
            yield Problem(first.severity, code, f"... and {len(found) - MAX_PER_CODE} more like the above", first.table)


def _capped(rows: Sequence[Sequence], make: Callable[..., Problem]) -> Iterator[Problem]:
    return _cap(make(*row) for row in rows)
