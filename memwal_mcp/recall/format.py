"""The text of a recall reply: one numbered line per hit, a note under folded copies."""

from __future__ import annotations

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


def recall_text(result: RecallResult) -> str:
    if not result.hits:
        if not result.searchable:
            return f"No memories match {result.query!r}: it has no word or number to search for."
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
        duplicates = hit.copies - hit.folded_by_llm
        if duplicates > 0:
            lines.append(copies_note(duplicates))
        if hit.folded_by_llm > 0:
            lines.append(folded_note(hit.folded_by_llm))
    return "\n".join(lines)
