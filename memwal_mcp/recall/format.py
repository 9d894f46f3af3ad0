"""The text of a recall reply: one numbered line per hit, a note under folded copies."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from ..records import RecallResult


def copies_note(copies: int) -> str:
    """Copies with the same normalized text: the same fact, stored again."""
    noun = "copy" if copies == 1 else "copies"
    return f"({copies} duplicate {noun} of the above collapsed; the same fact is stored more than once.)"


def folded_note(folded: int) -> str:
    """Facts a curation model judged to add nothing (SKIP): similar, not the same text."""
    noun = "fact" if folded == 1 else "facts"
    return f"({folded} similar {noun} folded into the above by the curation model.)"


def _day(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, tz=timezone.utc).date().isoformat()
    except (OverflowError, ValueError, OSError):
        return "?"


def status_marks(expires_at: float | None, superseded_by: str | None, now: float) -> str:
    """What a reader must know before trusting a fact: that it ends, ended, or was replaced."""
    marks = ""
    if expires_at is not None:
        marks += f" [expired {_day(expires_at)}]" if expires_at <= now else f" [expires {_day(expires_at)}]"
    if superseded_by is not None:
        marks += f" [superseded by {superseded_by}]"
    return marks


def recall_text(result: RecallResult) -> str:
    if not result.hits:
        if not result.searchable:
            return f"No memories match {result.query!r}: it has no word or number to search for."
        return f"No memories match {result.query!r} in namespace {result.namespace!r}."
    lines: list[str] = []
    now = time.time()
    for number, hit in enumerate(result.hits, start=1):
        body = hit.text.replace("\n", "\n   ")  # keep continuation lines inside their hit
        pending = " [pending]" if hit.pending else ""
        marks = status_marks(hit.expires_at, hit.superseded_by, now)
        lines.append(f"{number}. [score={hit.score:.3f}] [{_day(hit.when)}]{pending}{marks} {body}")
        duplicates = hit.copies - hit.folded_by_llm
        if duplicates > 0:
            lines.append(copies_note(duplicates))
        if hit.folded_by_llm > 0:
            lines.append(folded_note(hit.folded_by_llm))
    return "\n".join(lines)
