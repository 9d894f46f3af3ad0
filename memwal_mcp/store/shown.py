"""How recall and list read memories: a live memory that a queued remember job supersedes is
read as superseded already (hidden, or with include_superseded marked by that job's id), from
the moment the job is filed, not once it is curated -- a user who just corrected a fact must not
get the old value back first. A job that fails for good, or is forgotten, leaves the queue, and
the memory is back.

The decision is the same on every backend; each writes the SQL (its memories.py) as the pieces
of a statement below: the plain statement while no superseding job is queued (almost always),
else one that joins the queued jobs' targets, built once per statement.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Shown:
    """The pieces of a statement reading memories as recall and list show them."""

    ctes: str  # after WITH, before the statement's own CTEs ("" or ending in ", ")
    columns: str  # the memory row; `superseded_by` names the queued job superseding a live one
    join: str  # after FROM memories
    current: str  # the condition for a memory shown without include_superseded


def with_ctes(shown: Shown) -> str:
    """`WITH <ctes> ` for a statement with no CTE of its own ("" when there are none)."""
    return f"WITH {shown.ctes.removesuffix(', ')} " if shown.ctes else ""
