"""Collapse hits whose normalized text is identical; say how many copies were folded.

Exact-after-normalization only: an over-eager collapse hides real information,
which is worse than the duplicates it removes. Hits arrive best first, so the
survivor of each group is its best-ranked copy, and rank order is preserved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..normalize import norm_key
from ..records import Hit


def collapse_duplicates(hits: Iterable[Hit], occurrences: dict[str, int] | None = None) -> list[Hit]:
    """Fold duplicates into the first (best) copy; `copies` counts folded rows plus recorded occurrences.

    `occurrences` maps a hit id to the occurrences recorded on it (same fact stated again
    and folded at write time); they count as copies whether the row survives or is folded.
    """
    occurrences = occurrences or {}
    survivors: dict[str, Hit] = {}
    folded: dict[str, int] = {}
    for hit in hits:
        key = hit.key or norm_key(hit.text)
        copies = hit.copies + occurrences.get(hit.id, 0)
        if key in survivors:
            folded[key] += 1 + copies
        else:
            survivors[key] = hit
            folded[key] = copies
    return [
        hit if folded[key] == hit.copies else replace(hit, copies=folded[key]) for key, hit in survivors.items()
    ]
