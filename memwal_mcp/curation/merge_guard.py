"""MergeGuard: a deterministic check that an LLM-merged body lost nothing load-bearing.

Load-bearing tokens (URLs, e-mail addresses, dates, versions, numbers with or
without units, file paths, dotted / camelCase / snake_case / kebab-case / ALL_CAPS
identifiers, backticked code) of every source body must appear in the merged body,
case-insensitively, at >= 95 % retention; and the merged body must be at least 60 %
as long as the longest source. A merge that fails is not written: the caller
appends the proposal to the existing body instead, so nothing can be lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

MIN_RETENTION = 0.95
MIN_LENGTH_RATIO = 0.60

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

_UNITS = (
    r"ns|us|µs|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hr|hrs|hours?|d|days?|weeks?|months?|years?|"
    r"b|kb|mb|gb|tb|pb|kib|mib|gib|tib|bytes?|bits?|k|m|bn|km|cm|mm|kg|g|mg|lb|lbs|oz|px|em|rem|pt|"
    r"usd|eur|gbp|x|fps|hz|khz|mhz|ghz|rpm|rps|qps|w|kw|v|ma|mah|tokens?|users?|items?"
)

# Order matters: broader shapes first, and each match is removed before narrower
# patterns run, so "https://x.io/v1.2" is one URL, not a URL plus a version.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("code", re.compile(r"`[^`\n]+`")),
    ("url", re.compile(r"\b(?:https?|ftp)://[^\s<>()\"'`]+|\bwww\.[^\s<>()\"'`]+", re.I)),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("date", re.compile(
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
        rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}}\b",
        re.I,
    )),
    ("path", re.compile(r"(?:(?<=\s)|^)(?:~|\.{1,2})?(?:/[\w.\-@]+){2,}/?|\b[A-Za-z]:\\[\w.\-\\ ]+")),
    ("version", re.compile(r"\bv?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?\b")),
    ("dotted", re.compile(r"\b[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+\b")),
    ("camel", re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")),
    ("snake", re.compile(r"\b\w+_\w+\b")),
    ("kebab", re.compile(r"\b[A-Za-z0-9]+(?:-[A-Za-z0-9]+){1,}\b")),
    ("caps", re.compile(r"\b[A-Z][A-Z0-9]{2,}\b")),
    ("number", re.compile(
        r"[$€£¥]?(?<![\w.])[-+]?\d+(?:[.,]\d+)*"
        rf"(?:\s?(?:%|°[cf]\b|(?:{_UNITS})\b))?",
        re.I,
    )),
)
_TRAILING = ".,;:!?)]}'\""


def load_bearing_tokens(text: str) -> set[str]:
    """The casefolded tokens of `text` that a merge must keep."""
    found: set[str] = set()
    rest = text
    for _, pattern in _PATTERNS:
        def take(match: re.Match[str]) -> str:
            token = match.group(0).strip().rstrip(_TRAILING)
            if token:
                found.add(re.sub(r"\s+", " ", token).casefold())
            return " "

        rest = pattern.sub(take, rest)
    return found


@dataclass(frozen=True, slots=True)
class GuardResult:
    passed: bool
    retention: float
    length_ratio: float
    missing: tuple[str, ...]

    @property
    def reason(self) -> str:
        if self.passed:
            return f"retention {self.retention:.0%}, length {self.length_ratio:.0%}"
        missing = ", ".join(self.missing[:5]) + (" ..." if len(self.missing) > 5 else "")
        return (
            f"retention {self.retention:.0%} (needs {MIN_RETENTION:.0%}), length {self.length_ratio:.0%} "
            f"(needs {MIN_LENGTH_RATIO:.0%}); missing: {missing or 'nothing'}"
        )


def _contains(haystack: str, token: str) -> bool:
    """Whole-token presence: "3" is not kept by "2023"; "42 ms" is kept by "42ms"."""
    spaced = r"\s?".join(re.escape(part) for part in token.split(" "))
    return re.search(rf"(?<![\w]){spaced}(?![\w])", haystack) is not None


def check_merge(sources: Sequence[str], merged: str | None) -> GuardResult:
    """Judge a merged body against every source body it replaces."""
    if not merged or not merged.strip():
        return GuardResult(False, 0.0, 0.0, ("(no merged body)",))
    tokens: set[str] = set()
    for source in sources:
        tokens |= load_bearing_tokens(source)
    haystack = re.sub(r"\s+", " ", merged).casefold()
    missing = tuple(sorted(token for token in tokens if not _contains(haystack, token)))
    retention = 1.0 if not tokens else (len(tokens) - len(missing)) / len(tokens)
    longest = max((len(s.strip()) for s in sources), default=0)
    length_ratio = 1.0 if longest == 0 else len(merged.strip()) / longest
    passed = retention >= MIN_RETENTION and length_ratio >= MIN_LENGTH_RATIO
    return GuardResult(passed, retention, length_ratio, missing)


def append_body(existing: str, proposal: str, today: date | None = None) -> str:
    """The lossless fallback: keep the existing body and add the proposal under a dated rule."""
    stamp = (today or date.today()).isoformat()
    return f"{existing}\n\n---\n_[merged {stamp}]_\n{proposal}"
