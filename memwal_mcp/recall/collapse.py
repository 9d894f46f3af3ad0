"""Collapse hits whose normalized text is identical; say how many copies were folded.

Exact-after-normalization only: an over-eager collapse hides real information,
which is worse than the duplicates it removes. Hits arrive best first, so the
survivor of each group is its best-ranked copy (recall prefers a current one: see
group_duplicates), and rank order is preserved.

How many copies a survivor stands for is a fact about what is stored, not about what a
search happened to fetch: given `stored` (the store's count of each text's rows and
recorded repeats in the searched namespaces), that count is used, whatever the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import replace
from typing import Protocol, TypeVar

from ..normalize import norm_key
from ..records import Hit
from ..store.records import KeyCopies


class Collapsible(Protocol):
    """What grouping reads of a hit: a Hit, or a search's scored fact before its Hit is made."""

    @property
    def key(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def superseded_by(self) -> str | None: ...
    def expired(self, now: float) -> bool: ...


H = TypeVar("H", bound=Collapsible)


def group_duplicates(hits: Iterable[H], now: float | None = None) -> dict[str, list[H]]:
    """Hits by normalized-text key, groups in order of their best hit, best first inside.

    With `now`, a group's first hit (the one shown) is a current copy whenever the group holds
    one: an expired or superseded copy that happens to rank first must not make a fact that is
    still current look ended. Groups are then in the order of the hits shown."""
    ordered = list(hits)
    groups: dict[str, list[H]] = {}
    for hit in ordered:
        groups.setdefault(hit.key or norm_key(hit.text), []).append(hit)
    if now is None:
        return groups
    # Only a group of several copies, some ended, changes (in most recalls none); when one then
    # shows another copy, the groups are ordered again by the rank of the copy each shows.
    moved = False
    for key, group in groups.items():
        if len(group) > 1:
            current = [hit for hit in group if _current(hit, now)]
            if 0 < len(current) < len(group):
                groups[key] = current + [hit for hit in group if not _current(hit, now)]
                moved = moved or current[0] is not group[0]
    if not moved:
        return groups
    position = {id(hit): i for i, hit in enumerate(ordered)}
    return dict(sorted(groups.items(), key=lambda item: position[id(item[1][0])]))


def _current(hit: Collapsible, now: float) -> bool:
    return not hit.expired(now) and hit.superseded_by is None


def survivor(
    key: str,
    group: list[Hit],
    occurrences: Mapping[str, int],
    stored: KeyCopies | None,
    queued: Set[str] | None = None,
) -> Hit:
    """The group's best hit, with `copies` = every other instance of its text (and
    `folded_by_llm` = the SKIP-folded ones among them). `queued`: the pending hits' jobs still
    queued when `stored` was counted (None: all of them)."""
    best = group[0]
    if stored is not None:
        # Queued facts are not in the store's count: each one still queued is one more copy. One
        # curated since the search read it is in the count already: it is the memory, not a copy.
        same = (
            stored.rows
            + stored.occurrences
            + sum(1 for hit in group if hit.pending and (queued is None or hit.id in queued))
        )
        llm = stored.folded_by_llm
    else:
        same = sum(1 + hit.copies - hit.folded_by_llm + occurrences.get(hit.id, 0) for hit in group)
        llm = sum(hit.folded_by_llm for hit in group)
    if same >= 1:
        same -= 1  # the one shown
    else:  # found only through a fact folded into it (a time window can leave just that)
        llm = max(0, llm - 1)
    if best.copies == same + llm and best.folded_by_llm == llm:
        return best
    return replace(best, copies=same + llm, folded_by_llm=llm)


def collapse_duplicates(
    hits: Iterable[Hit],
    occurrences: Mapping[str, int] | None = None,
    stored: Mapping[str, KeyCopies] | None = None,
) -> list[Hit]:
    """Fold duplicates into the first (best) copy.

    Without `stored`, `copies` counts the folded hits plus `occurrences` (hit id -> the
    repeats recorded on it), whether the row survives or is folded. With `stored`, a key it
    knows is counted from it instead (plus any queued facts among the hits)."""
    occurrences = occurrences or {}
    stored = stored or {}
    return [survivor(key, group, occurrences, stored.get(key)) for key, group in group_duplicates(hits).items()]
