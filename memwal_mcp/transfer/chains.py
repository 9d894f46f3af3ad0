"""Where a file says each retired memory went, checked over the file's own memory records.

A retired memory is reached only through the memory it went to: `retired_into` (a CONSOLIDATE
merged it) or `superseded_by` (a newer fact replaced it), exactly one of the two. A live memory
went nowhere. These links may chain (a replacement replaced in turn, then merged) but never loop:
each was made from a memory that was live at that moment, and a live memory names no link. A
file that says otherwise was not written by an export, and importing it would leave memories
that recall, history and undo cannot reach (`check` reports them as errors), so it is refused
whole. Whether a named memory exists, and is the same owner's, asks the store as well: that is
the import's reference check, once the whole file is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ImportFormatError
from ..store.records import ImportRow, MemoryRecord


def _problem(memory: MemoryRecord) -> str | None:
    """What is wrong with one memory record's own links, or None."""
    into, by = memory.retired_into, memory.superseded_by
    if memory.status == "live":
        named = [f"{name} {value!r}" for name, value in (("retired_into", into), ("superseded_by", by)) if value]
        return f"is live, yet names {' and '.join(named)}; only a retired memory went anywhere" if named else None
    if into is None and by is None:
        return (
            "is retired but names neither retired_into (the memory it was merged into) nor superseded_by"
            " (the one that replaced it), so nothing would lead to it"
        )
    if into is not None and by is not None:
        return (
            f"names both retired_into {into!r} and superseded_by {by!r}; a retired memory was either merged"
            " or replaced, not both"
        )
    if memory.id in (into, by):
        return f"names itself as its {'retired_into' if into else 'superseded_by'}"
    return None


@dataclass
class Chains:
    """Fed every record of a file in order; refuses a memory record whose links contradict
    themselves at once, and a loop of links once the file is read (`close`)."""

    path: Path
    # (owner, memory id) -> (the memory it went to, the line that says so)
    _next: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)

    def see(self, line_no: int, row: ImportRow) -> None:
        if not isinstance(row, MemoryRecord):
            return
        problem = _problem(row)
        if problem is not None:
            raise ImportFormatError(f"{self.path}, line {line_no}: memory {row.id!r} {problem}; nothing was imported")
        went = row.retired_into or row.superseded_by
        if went is not None:
            self._next[(row.owner, row.id)] = (went, line_no)

    def close(self) -> None:
        """Follow each memory's links until they end; coming back round is refused, named by the
        first line of the loop."""
        ended: set[tuple[str, str]] = set()
        for start in self._next:
            walked: dict[tuple[str, str], int] = {}  # in the order walked (a dict: a long chain stays linear)
            at = start
            while at in self._next and at not in ended and at not in walked:
                walked[at] = len(walked)
                at = (at[0], self._next[at][0])
            if at in walked:
                loop = list(walked)[walked[at] :]
                first = min(loop, key=lambda key: self._next[key][1])
                turn = loop.index(first)
                shown = " -> ".join(memory for _, memory in [*loop[turn:], *loop[:turn], first])
                raise ImportFormatError(
                    f"{self.path}, line {self._next[first][1]}: memory {first[1]!r}: its retired_into/superseded_by"
                    f" links come back round to it ({shown}); they may chain, never loop; nothing was imported"
                )
            ended.update(walked)
