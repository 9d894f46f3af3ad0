"""The text of a recall reply: one numbered line per hit, a note under folded copies."""

from __future__ import annotations

from datetime import datetime, timezone

from ..records import RecallResult


def copies_note(copies: int) -> str:
    noun = "copy" if copies == 1 else "copies"
    return f"({copies} duplicate {noun} of the above collapsed; the same fact is stored more than once.)"


def recall_text(result: RecallResult) -> str:
    if not result.hits:
        return f"No memories match {result.query!r} in namespace {result.namespace!r}."
    lines: list[str] = []
    for number, hit in enumerate(result.hits, start=1):
        body = hit.text.replace("\n", "\n   ")  # keep continuation lines inside their hit
        pending = " [pending]" if hit.pending else ""
        try:
            day = datetime.fromtimestamp(hit.when, tz=timezone.utc).date().isoformat()
        except (OverflowError, ValueError, OSError):
            day = "?"
        lines.append(f"{number}. [score={hit.score:.3f}] [{day}]{pending} {body}")
        if hit.copies:
            lines.append(copies_note(hit.copies))
    return "\n".join(lines)
