"""Collapse hits whose normalized text is identical; say how many copies were folded.

Exact-after-normalization only: an over-eager collapse hides real information,
which is worse than the duplicates it removes. Hits arrive best first, so the
survivor of each group is its best-ranked copy, and rank order is preserved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..normalize import normalize_text
from ..records import Hit


def collapse_duplicates(hits: Iterable[Hit], occurrences: dict[str, int] | None = None) -> list[Hit]:
    """Fold duplicates into the first (best) copy; `copies` counts folded rows plus recorded occurrences.

    `occurrences` maps a hit id to the occurrences recorded on it (same fact stated again
    and folded at write time); they count as copies whether the row survives or is folded.
    """
    occurrences = occurrences or {}
    survivors: dict[str, Hit] = {}
    for hit in hits:
        extra = occurrences.get(hit.id, 0)
        key = normalize_text(hit.text)
        kept = survivors.get(key)
        if kept is None:
            survivors[key] = replace(hit, copies=hit.copies + extra)
        else:
            survivors[key] = replace(kept, copies=kept.copies + 1 + hit.copies + extra)
    return list(survivors.values())
