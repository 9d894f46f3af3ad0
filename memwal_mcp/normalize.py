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
