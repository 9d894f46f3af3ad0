"""The text of a recall reply: one numbered line per hit, a note under folded copies."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from datetime import time as datetime_time

from ..records import Hit, RecallResult
from ..validation import show
from ..wording import counted


def copies_note(copies: int) -> str:
    """Copies with the same normalized text: the same fact, stored again."""
    return f"({counted(copies, 'duplicate copy')} of the above collapsed; the same fact is stored more than once.)"


def folded_note(folded: int) -> str:
    """Facts a curation model judged to add nothing (SKIP): similar, not the same text."""
    return f"({counted(folded, 'similar fact')} folded into the above by the curation model.)"


def _day(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, tz=timezone.utc).date().isoformat()
    except (OverflowError, ValueError, OSError):
        return "?"


def last_day(expires_at: float) -> str:
    """The last UTC day a fact holds: an expiry at midnight (a date-only expires_at, the end of
    that day) names the day before it, the day the caller gave."""
    try:
        end = datetime.fromtimestamp(expires_at, tz=timezone.utc)
        day = end.date() - timedelta(days=1) if end.time() == datetime_time(0) else end.date()
    except (OverflowError, ValueError, OSError):
        return "?"
    return day.isoformat()


def expiry_mark(expires_at: float | None, expired: bool) -> str:
    """` [expires D]` or, once past, ` [expired D]`, D the last day the fact holds; "" when it
    does not expire."""
    if expires_at is None:
        return ""
    return f" [{'expired' if expired else 'expires'} {last_day(expires_at)}]"


def superseded_mark(superseded_by: str | None) -> str:
    """` [superseded by m_...]`, or for a fact a queued remember job (j_...) names in its
    supersedes, not curated yet, ` [being replaced by queued job j_...]`; "" for neither."""
    if superseded_by is None:
        return ""
    if superseded_by.startswith("j_"):
        return f" [being replaced by queued job {superseded_by}]"
    return f" [superseded by {superseded_by}]"


def status_marks(expires_at: float | None, superseded_by: str | None, now: float) -> str:
    """What a reader must know before trusting a fact: that it ends, ended, or was replaced."""
    return expiry_mark(expires_at, expires_at is not None and expires_at <= now) + superseded_mark(superseded_by)


def hit_lines(number: int, hit: Hit, now: float) -> str:
    """One hit as the reply shows it: its line and the notes under it."""
    body = hit.text.replace("\n", "\n   ")  # keep continuation lines inside their hit
    pending = " [pending]" if hit.pending else ""
    marks = status_marks(hit.expires_at, hit.superseded_by, now)
    lines = [f"{number}. [score={hit.score:.3f}] [{_day(hit.when)}]{pending}{marks} {body}"]
    duplicates = hit.copies - hit.folded_by_llm
    if duplicates > 0:
        lines.append(copies_note(duplicates))
    if hit.folded_by_llm > 0:
        lines.append(folded_note(hit.folded_by_llm))
    return "\n".join(lines)


def fit(result: RecallResult, max_chars: int | None) -> RecallResult:
    """The hits, best first, that keep the hit lines within `max_chars`; the rest are counted
    as omitted. Stops at the first that does not fit, so what is shown is always the best."""
    if max_chars is None:
        return result
    now = time.time()
    used, kept, best = 0, 0, 0
    for number, hit in enumerate(result.hits, start=1):
        size = len(hit_lines(number, hit, now)) + (1 if kept else 0)  # the line break before it
        if used + size > max_chars:
            best = 0 if kept else size
            break
        used += size
        kept += 1
    omitted = len(result.hits) - kept
    return replace(result, hits=result.hits[:kept], max_chars=max_chars, omitted=omitted, best_chars=best)


def omitted_note(result: RecallResult) -> str:
    """Says how many were left out; "more" only after hits shown, and when none fits, how much the
    best one needs (so the caller knows what max_chars would show it)."""
    if not result.hits:
        left_out = counted(result.omitted, "relevant memory")
        return (
            f"(No hit fits max_chars={result.max_chars}: the best one needs {result.best_chars} characters; "
            f"{left_out} left out.)"
        )
    return f"({counted(result.omitted, 'more relevant memory')} left out by max_chars={result.max_chars}.)"


def recall_text(result: RecallResult) -> str:
    if not result.hits and not result.omitted:
        if not result.searchable:
            return f"No memories match {show(result.query)}: it has no word or number to search for."
        # The query cut short, as every message shows a caller's value: it may be 4 KB or more.
        return f"No memories match {show(result.query)} in namespace {result.namespace!r}."
    now = time.time()
    blocks = [hit_lines(number, hit, now) for number, hit in enumerate(result.hits, start=1)]
    if result.omitted:
        blocks.append(omitted_note(result))
    return "\n".join(blocks)
