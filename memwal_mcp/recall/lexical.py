"""Turn a user's query into the words a text search looks for, and tell whether it has any.

The words are plain terms: each backend quotes them for its own query syntax, so nothing a
user types is ever syntax. Common English function words are dropped (unless nothing else is
left): with OR semantics they would match nearly everything and drown the words that carry the
question.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t don doesn didn isn wasn weren ll ve re d m o y also ever
    """.split()
)
# Kept even though they are function words: a memory about what the user does NOT want
# must still be found by "not", "never", "no".
_MEANINGFUL = frozenset({"not", "no", "nor", "never"})


def query_tokens(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """Distinct casefolded word tokens, in order of first appearance."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.casefold()):
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


def content_terms(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """Query words without stop-words (all of them if nothing else is left), as typed: the
    text index folds them with its own tokenizer, as it folded the memories. Folding them here
    first would make words the two foldings disagree on unfindable ("Straße" casefolds to
    "strasse", which no memory holding "Straße" is indexed under)."""
    seen: dict[str, str] = {}
    for token in _TOKEN.findall(text):
        seen.setdefault(token.casefold(), token)
        if len(seen) >= 256:
            break
    kept = [token for folded, token in seen.items() if folded not in STOPWORDS or folded in _MEANINGFUL]
    return (kept or list(seen.values()))[:max_terms]


def searchable(text: str) -> bool:
    """Whether the query holds anything to search for: a letter or a digit in any script.
    Zero-width characters, punctuation and symbols alone mean nothing to either signal (the
    model embeds them to an arbitrary point, which would "find" arbitrary facts)."""
    return any(char.isalnum() for char in text)


def has_content_word(terms: list[str]) -> bool:
    """Whether the searched terms include a content word, not only the function words that
    content_terms falls back to (a match on "what" or "is" says nothing about relevance)."""
    return any(term.casefold() not in STOPWORDS or term.casefold() in _MEANINGFUL for term in terms)
