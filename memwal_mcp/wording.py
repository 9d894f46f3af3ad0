"""Counted nouns in what people read: "1 fact", "2 facts", "1 memory", "3 memories".

One place, so no reply says "1 facts" and no module grows its own plural rule."""

from __future__ import annotations

# Nouns whose plural is not the noun and an "s" (the last word of a phrase is the one counted).
_IRREGULAR = {"memory": "memories", "copy": "copies", "entry": "entries", "info": "info"}


def plural(noun: str) -> str:
    """The plural of a noun or of a phrase ending in one ("remember job" -> "remember jobs")."""
    head, _, last = noun.rpartition(" ")
    many = _IRREGULAR.get(last, last + "s")
    return f"{head} {many}" if head else many


def counted(n: int, noun: str) -> str:
    """`n` and the noun, singular for exactly one: "1 fact", "0 facts", "2 remember jobs"."""
    return f"{n} {noun if n == 1 else plural(noun)}"


def agree(n: int, one: str, many: str) -> str:
    """The verb form for a count: agree(1, "was", "were") -> "was"."""
    return one if n == 1 else many
