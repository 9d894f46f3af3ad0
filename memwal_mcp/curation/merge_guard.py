"""MergeGuard: a deterministic check that an LLM decision hides nothing from recall.

Recall searches a memory's current body only (its old bodies live on as revisions and
the proposal in the journal, both out of recall's reach), so what a merge drops is as
good as lost. A merged body therefore keeps, case-insensitively, 100 % of:

- the load-bearing tokens of every source body: URLs (any scheme), e-mail addresses,
  dates (ISO, slashed, written out) and times, versions, numbers with or without units
  (a port in `host:5432` included), file paths, dotted / camelCase / snake_case /
  kebab-case / ALL_CAPS identifiers and words mixing letters and digits, backticked code;
- the content words of every source body (stemmed, so "mornings" keeps "morning"; a
  negation in any form is one word, "not"),

it adds no negation that none of the sources has ("allergic" merged into "not allergic"),

and it is at least 60 % as long as the longest source. A merge that fails is not
written: the caller appends the proposal to the existing body instead, so nothing can
be lost. A SKIP ("the proposal adds nothing") is held to the same measure against its
target (`check_skip`): a proposal with a token or a content word the target lacks is
not hidden behind it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from py_rust_stemmers import SnowballStemmer

from ..recall.lexical import STOPWORDS, query_tokens

MIN_RETENTION = 1.0
MIN_LENGTH_RATIO = 0.60

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORDINAL = r"(?:st|nd|rd|th)?"

_UNITS = (
    r"ns|us|µs|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hr|hrs|hours?|d|days?|weeks?|months?|years?|"
    r"b|kb|mb|gb|tb|pb|kib|mib|gib|tib|bytes?|bits?|kbps|mbps|gbps|k|m|bn|km|cm|mm|kg|g|mg|l|ml|lb|lbs|oz|"
    r"px|em|rem|pt|usd|eur|gbp|x|fps|hz|khz|mhz|ghz|rpm|rps|qps|w|kw|v|ma|mah|percent|pct|"
    r"tokens?|users?|items?"
)
_SEGMENT = r"[\w.\-@+]+"
# Patterns that open with a greedy run of characters start only where such a run starts:
# from every position inside "a.a.a..." they would rescan the rest, quadratic in the text.
_RUN_START = r"(?<![\w.\-@+/])"

# Order matters: broader shapes first, and each match is removed before narrower
# patterns run, so "https://x.io/v1.2" is one URL, not a URL plus a version.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("code", re.compile(r"`[^`\n]+`")),
    (
        "url",
        re.compile(
            r"(?<![\w+.\-])[a-z][a-z0-9+.\-]*://[^\s<>()\"'`]+"  # https://, postgresql://, s3://, file:///
            r"|\bwww\.[^\s<>()\"'`]+"
            r"|(?<![\w.\-])[\w.\-]+@[\w\-]+(?:\.[\w\-]+)*:[\w.~/\-]+",  # scp style: git@github.com:org/repo.git
            re.I,
        ),
    ),
    ("email", re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    (
        "date",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
            r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
            rf"|\b{_MONTHS}\.?\s+\d{{1,2}}{_ORDINAL}(?:,?\s+\d{{4}})?\b"  # March 3rd, 2025 / March 3
            rf"|\b\d{{1,2}}{_ORDINAL}\s+(?:of\s+)?{_MONTHS}\b\.?(?:,?\s+\d{{4}}\b)?"  # 3 March 2025 / 3rd of March
            rf"|\b{_MONTHS}\.?,?\s+\d{{4}}\b",  # March 2025
            re.I,
        ),
    ),
    (
        "time",
        re.compile(
            r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\b\.?)?(?![:\w])"  # 9:30, 14:00:00, 9:30 am
            r"|\b\d{1,2}\s?[ap]\.?m\b\.?",  # 5pm, 5 p.m.
            re.I,
        ),
    ),
    (
        "path",
        re.compile(
            r"\b[A-Za-z]:\\(?:[\w.\-]+(?: [\w.\-]+)*\\)*[\w.\-]+"  # C:\Program Files\App\app.exe
            rf"|(?<![\w~./:\\-])(?:~|\.{{1,2}})?/{_SEGMENT}(?:/{_SEGMENT})*/?"  # /mcp, /etc/hosts, ~/.config, ./run.sh
            rf"|{_RUN_START}{_SEGMENT}(?:/{_SEGMENT}){{2,}}/?"  # a/b/c
            rf"|{_RUN_START}{_SEGMENT}(?:/{_SEGMENT})*/[\w\-@+]+\.[A-Za-z0-9]{{1,8}}\b"  # src/main.py
        ),
    ),
    (
        "version",
        re.compile(
            r"\bv\d+(?:\.\d+)*(?:[-+][0-9A-Za-z][0-9A-Za-z.]*)?\b"  # v2, v1.2.3-rc1
            r"|\b\d+(?:\.\d+){2,}(?:[-+][0-9A-Za-z][0-9A-Za-z.]*)?\b"  # 2.4.1, 10.0.0.1
            r"|\b\d+\.\d+[-+][0-9A-Za-z][0-9A-Za-z.]*\b",  # 1.0-SNAPSHOT
            re.I,
        ),
    ),
    ("dotted", re.compile(r"(?<![\w-])[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+\b")),
    ("camel", re.compile(r"\b[A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*\b|\b[A-Z]{2,}[a-z][A-Za-z0-9]*\b")),
    ("snake", re.compile(r"\b\w+_\w+\b")),
    ("kebab", re.compile(r"\b[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b")),
    # Before the capitals and letter-digit words: "500 EUR" and "10 MB" are one token each, an
    # amount, not a number and a unit that may turn up apart.
    (
        "number",
        re.compile(
            r"[$€£¥]?(?<![\w.])[-+]?\.?\d+(?:[.,]\d+)*"
            rf"(?:[ \t\u00a0]?(?:%|°\s?[cf]\b|(?:{_UNITS})\b))?(?!\w)",  # a unit on the same line
            re.I,
        ),
    ),
    ("caps", re.compile(r"\b[A-Z][A-Z0-9]+\b")),
    ("alnum", re.compile(r"\b(?:[A-Za-z]+\d|\d+[A-Za-z])[A-Za-z0-9]*\b")),  # python3, k8s, 3rd, 42ms
)
_TRAILING = ".,;:!?)]}'\""
# "e.g." and "i.e." are dotted, but no identifier.
_ABBREVIATION = re.compile(r"(?:[a-z]\.)+[a-z]")


def load_bearing_tokens(text: str) -> set[str]:
    """The casefolded tokens of `text` that a merge must keep."""
    found: set[str] = set()
    rest = text
    for kind, pattern in _PATTERNS:

        def take(match: re.Match[str]) -> str:
            token = re.sub(r"\s+", " ", match.group(0).strip().rstrip(_TRAILING)).casefold()
            if token and not (kind == "dotted" and _ABBREVIATION.fullmatch(token)):
                found.add(token)
            return " "

        rest = pattern.sub(take, rest)
    return found


# The recall stop-words, less those that change what a fact says: "prefers dark roast
# only", "before 9", "more than 3" are not "prefers dark roast", "9", "3".
_QUALIFIERS = frozenset(
    """
    after against all any before below above between both down during each few more most no nor not off once
    only other out over own same some such too under until up very again further because if
    """.split()
)
# "now" is filler too (as in NLTK's list): when a fact holds is its memory's timestamp.
_FILLER = (STOPWORDS - _QUALIFIERS) | {"now"}
# Every spelling of a negation counts as the word "not": "does not", "doesn't" and "no"
# say the same; "likes" and "doesn't like" do not.
_NEGATIONS = frozenset({"not", "no", "nor", "never", "cannot"})
_NOT = "not"
_CONTRACTED = (
    (re.compile(r"\bcan['’]t\b", re.I), "can not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
)


@lru_cache(maxsize=1)
def _stemmer() -> SnowballStemmer:
    return SnowballStemmer("english")


def _words(text: str) -> list[str]:
    for contraction, spelled in _CONTRACTED:
        text = contraction.sub(spelled, text)
    return query_tokens(text, max_terms=len(text) + 1)


def _stems(words: Iterable[str]) -> dict[str, str]:
    """Each word's stem, mapped to the first word that had it (for messages)."""
    stem = _stemmer().stem_word
    found: dict[str, str] = {}
    for word in words:
        found.setdefault(_NOT if word in _NEGATIONS else stem(word), word)
    return found


def content_words(text: str) -> dict[str, str]:
    """The words of `text` that carry what it says, by stem. Numbers are left to the tokens."""
    return _stems(w for w in _words(text) if (w not in _FILLER or w in _NEGATIONS) and not w.isdigit())


def _negations(text: str) -> int:
    return sum(1 for word in _words(text) if word in _NEGATIONS)


def _added_negations(sources: Sequence[str], kept: str) -> int:
    """Negations in `kept` beyond those of its sources: "allergic to peanuts" merged into "not
    allergic to peanuts" keeps every word and says the opposite."""
    return max(0, _negations(kept) - sum(_negations(source) for source in sources))


@dataclass(frozen=True, slots=True)
class GuardResult:
    passed: bool
    retention: float  # share of the sources' tokens and content words that were kept
    length_ratio: float
    missing_tokens: tuple[str, ...] = ()
    missing_words: tuple[str, ...] = ()
    added_negations: int = 0  # negations the kept body has and no source had

    @property
    def missing(self) -> tuple[str, ...]:
        return (
            self.missing_tokens + self.missing_words + (("a negation no source has",) if self.added_negations else ())
        )

    @property
    def reason(self) -> str:
        if self.passed:
            return f"retention {self.retention:.0%}, length {self.length_ratio:.0%}"

        def listed(items: tuple[str, ...]) -> str:
            return ", ".join(items[:5]) + (" ..." if len(items) > 5 else "") if items else "none"

        added = f"; adds {self.added_negations} negation(s) no source has" if self.added_negations else ""
        return (
            f"retention {self.retention:.0%} (needs {MIN_RETENTION:.0%}), length {self.length_ratio:.0%} "
            f"(needs {MIN_LENGTH_RATIO:.0%}); missing tokens: {listed(self.missing_tokens)}; "
            f"missing words: {listed(self.missing_words)}{added}"
        )


def _contains(haystack: str, token: str) -> bool:
    """Whole-token presence: "3" is not kept by "2023"; "42 ms" is kept by "42ms". Only an
    edge that is a word character needs a boundary: "`x`" is kept by "a`x`b". A number is
    kept only as the same number: not inside a decimal ("5" by "3.5", "3.5" by "3.55") and
    not with a sign it did not have ("500" by "-500"; a hyphen after a word is no sign)."""
    spaced = r"\s?".join(re.escape(part) for part in token.split(" "))
    before = r"(?<!\w)" if re.match(r"\w", token) else ""
    if re.match(r"\d", token):
        before += r"(?<!\d[.,])(?<!(?<!\w)[-+])"
    after = r"(?!\w)" if re.search(r"\w$", token) else ""
    if re.search(r"\d$", token):
        after += r"(?![.,]\d)"
    return re.search(before + spaced + after, haystack) is not None


def _lost(sources: Sequence[str], kept: str) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(tokens, content words) of `sources` that `kept` lacks, and how many there were."""
    tokens: set[str] = set()
    words: dict[str, str] = {}
    for source in sources:
        tokens |= load_bearing_tokens(source)
        words = content_words(source) | words
    haystack = re.sub(r"\s+", " ", kept).casefold()
    # One regex scan of `kept` per token is slow for thousands of tokens: a token `kept` yields
    # itself is there, and one that is not even a substring (spaces aside) is missing.
    found, flat = load_bearing_tokens(kept), haystack.replace(" ", "")

    def present(token: str) -> bool:
        return token in found or (token.replace(" ", "") in flat and _contains(haystack, token))

    missing_tokens = tuple(sorted(token for token in tokens if not present(token)))
    kept_stems = _stems(_words(kept))  # filler included: a content word may be kept anywhere
    missing_words = tuple(sorted(word for stem, word in words.items() if stem not in kept_stems))
    return missing_tokens, missing_words, len(tokens) + len(words)


def _retention(missing_tokens: tuple[str, ...], missing_words: tuple[str, ...], total: int) -> float:
    return 1.0 if not total else (total - len(missing_tokens) - len(missing_words)) / total


def check_merge(sources: Sequence[str], merged: str | None) -> GuardResult:
    """Judge a merged body against every source body it replaces."""
    if not merged or not merged.strip():
        return GuardResult(False, 0.0, 0.0, ("(no merged body)",))
    missing_tokens, missing_words, total = _lost(sources, merged)
    retention = _retention(missing_tokens, missing_words, total)
    longest = max((len(s.strip()) for s in sources), default=0)
    length_ratio = 1.0 if longest == 0 else len(merged.strip()) / longest
    added = _added_negations(sources, merged)
    passed = retention >= MIN_RETENTION and length_ratio >= MIN_LENGTH_RATIO and not added
    return GuardResult(passed, retention, length_ratio, missing_tokens, missing_words, added)


def check_skip(proposal: str, target: str) -> GuardResult:
    """Judge a SKIP: the target must already say everything the proposal says. Its length
    does not matter: a short target that holds every word and token hides nothing."""
    missing_tokens, missing_words, total = _lost([proposal], target)
    retention = _retention(missing_tokens, missing_words, total)
    # A target that negates what the proposal affirms does not hold it either.
    added = _added_negations([proposal], target)
    return GuardResult(retention >= MIN_RETENTION and not added, retention, 1.0, missing_tokens, missing_words, added)


def append_body(existing: str, proposal: str, today: date | None = None) -> str:
    """The lossless fallback: keep the existing body and add the proposal under a dated rule."""
    stamp = (today or date.today()).isoformat()
    return f"{existing}\n\n---\n_[merged {stamp}]_\n{proposal}"
