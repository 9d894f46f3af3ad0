"""Normalized text: the one definition of "the same fact" (exact match only).

`casefold(collapse_whitespace(strip(NFKC(text))))`. Never substring, never fuzzy:
"prefers dark roast coffee" and "prefers dark roast coffee in the morning only"
are different facts and must both survive.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    # NFKC again after casefold: casefolding can yield decomposed sequences
    # (U+01F0 -> j + caron), and normalization must be idempotent.
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return _WHITESPACE.sub(" ", folded).strip()


def norm_key(text: str) -> str:
    """A compact index key for the normalized text; equality is still checked on the text."""
    return hashlib.blake2b(normalize_text(text).encode("utf-8"), digest_size=16).hexdigest()


# Characters that render as nothing, beyond whitespace and the format category (Cf: zero-width
# spaces and joiners, direction marks and overrides, the BOM, tag characters): the rest of
# Unicode's Default_Ignorable_Code_Point set (combining grapheme joiner, Hangul fillers,
# Mongolian and other variation selectors) and the blank Braille pattern.
_BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})


def has_visible_content(text: str) -> bool:
    """False for a text a reader would see as empty: stored, it would be a memory nobody can read
    or match, e.g. "\\u200b\\u200b" or a lone U+202E."""
    return any(
        not (char.isspace() or unicodedata.category(char) in _UNSEEN_CATEGORIES or _BLANK.match(char)) for char in text
    )
