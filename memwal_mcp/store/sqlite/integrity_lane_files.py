"""Each big lane's sidecar file holds the database's vectors: check's line per lane file.

The sidecar (matrix_file) is derived data, like the full-text index, but outside the
database file, so `PRAGMA integrity_check` never sees it, and a restart checks only a
sample of its rows (matrix_check). Check compares every row; a damaged file is deleted when
check may repair (`memwal-mcp check`), so the next load rebuilds it, and only reported when
it may not (doctor, which changes nothing).
"""

from __future__ import annotations

import sqlite3
from typing import Literal

from ..records import Problem
from . import matrix_check
from .integrity_common import _table_exists

# The codes doctor lists per big lane (doctor.check_lane_files).
LANE_FILE_CODES = ("lane_file", "lane_file_damaged", "lane_file_unusable", "lane_file_busy")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def lane_files(conn: sqlite3.Connection, repair: bool) -> list[Problem]:
    """One line per lane with a sidecar file for the vector table searches use."""
    if not _table_exists(conn, "embedding_meta") or "vector_table" not in _columns(conn, "embedding_meta"):
        return []
    if "vec_version" not in _columns(conn, "lanes"):
        return []
    meta = conn.execute("SELECT vector_table, dim FROM embedding_meta WHERE singleton = 1").fetchone()
    if meta is None or not _table_exists(conn, meta[0]):
        return []
    table, dim = meta
    out: list[Problem] = []
    for (lane,) in conn.execute("SELECT id FROM lanes ORDER BY id").fetchall():
        state = matrix_check.verify(conn, table, dim, lane)
        if state is not None:
            out.append(_line(state, repair, str(lane)))
    return out


def _line(state: matrix_check.FileState, repair: bool, lane: str) -> Problem:
    name = state.path.name
    if state.unusable is not None:
        # A load would rebuild it, but a server that mapped the file before it went bad still
        # reads it: check deletes it (a server notices and reloads) and counts damage as an error.
        severity: Literal["error", "info"] = "error" if matrix_check.unusable_by_damage(state) else "info"
        found = f"{name} is unusable ({state.unusable})"
        if not repair:
            return Problem(
                severity,
                "lane_file_unusable",
                f"{found}; `memwal-mcp check` deletes it so it is rebuilt (a server already reading it goes on until then)",
                "lanes",
                lane,
            )
        if matrix_check.discard(state):
            return Problem(
                severity, "lane_file_unusable", f"{found}; deleted, the next load rebuilds it", "lanes", lane
            )
        return Problem("info", "lane_file_busy", f"{name} changed while check read it: run check again", "lanes", lane)
    if state.newer:
        return Problem(
            "info", "lane_file_busy", f"{name} was written after this check began: not compared", "lanes", lane
        )
    if not state.damaged:
        return Problem(
            "info",
            "lane_file",
            f"{name}: its {state.compared} unchanged rows equal the database's vectors",
            "lanes",
            lane,
        )
    found = f"{name}: {state.differing} of {state.compared} rows differ from the database's vectors"
    if state.missing:
        found += f" and {state.missing} vectors are missing"
    if not repair:
        return Problem(
            "error", "lane_file_damaged", f"{found}; `memwal-mcp check` deletes it so it is rebuilt", "lanes", lane
        )
    if matrix_check.discard(state):
        return Problem("error", "lane_file_damaged", f"{found}; deleted, the next load rebuilds it", "lanes", lane)
    return Problem("info", "lane_file_busy", f"{name} changed while check read it: run check again", "lanes", lane)
