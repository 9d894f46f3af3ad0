"""The one evaluator: what should happen to a proposal (a queued job) in its lane.

Order (DESIGN.md): exact normalized-text match with a live memory -> occurrence;
otherwise create. Nomination by kNN and the LLM decider slot in between those two
steps; similarity alone never folds anything.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

from ..normalize import norm_key, normalize_text
from ..store import memories

Action = Literal["create", "occurrence"]


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    reason: str
    target_rowid: int | None = None
    target_id: str | None = None


def evaluate(conn: sqlite3.Connection, lane: int, text: str, curation_enabled: bool) -> Decision:
    if not curation_enabled:
        return Decision("create", "curation disabled")
    wanted = normalize_text(text)
    for rowid, memory_id, body in memories.live_by_norm_key(conn, lane, norm_key(text)):
        if normalize_text(body) == wanted:  # the key is a hash: confirm on the text itself
            return Decision("occurrence", "exact normalized-text match", rowid, memory_id)
    return Decision("create", "no live memory with the same normalized text")
