"""Turn a user's query into a safe FTS5 expression.

Every token is double-quoted, so quotes, AND/OR/NEAR, `*`, `:`, parentheses and
column filters in the query are words to look for, never syntax.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32


def query_tokens(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """Distinct casefolded word tokens, in order of first appearance."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.casefold()):
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


def fts_query(text: str, max_terms: int = MAX_TERMS) -> str | None:
    """An OR of the query's quoted word tokens, or None if it has none."""
    tokens = query_tokens(text, max_terms)
    return " OR ".join(f'"{token}"' for token in tokens) if tokens else None


def bm25_to_score(rank: float) -> float:
    """FTS5's bm25() is negative, more negative = better; map it into (0, 1)."""
    strength = max(0.0, -rank)
    return strength / (strength + 1.0)
