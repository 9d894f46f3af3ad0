"""An owner's records cut into transactions that each stand on their own.

An import checks every reference of what it wrote before it commits (store/importing.py): a
job names the memory it ended in, a memory the job it came from and where it went when retired
or superseded, a revision its job and the memories merged into it, a tombstone its memory. A
transaction holding one end of such a link without the other (and without it already stored)
would be refused. So records are first joined into groups, the connected parts of that graph
(a supersede chain, a memory with its repeats and revisions, an analyze request with its
facts), and whole groups are packed, in the order they were written, into batches of about
`size` records. A group larger than `size` is a batch of its own: it cannot be split.

A batch commits whole or not at all, so a migration killed at any instant leaves whole groups
behind, and a re-run skips them by id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..records import Job
from ..store.records import ImportRow, LaneRow, MemoryRecord, RevisionRow, TombstoneRow

# Records per transaction: big enough that a commit's cost is spread thin, small enough that a
# kill loses little work and a transaction holds few locks.
BATCH_RECORDS = 2000

_Node = tuple[str, str]  # ("job" | "memory", public id)


@dataclass
class Records:
    """One owner's records in export order (each kind in the order it was written)."""

    lanes: list[LaneRow] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    revisions: list[RevisionRow] = field(default_factory=list)
    tombstones: list[TombstoneRow] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lanes) + len(self.jobs) + len(self.memories) + len(self.revisions) + len(self.tombstones)

    def rows(self) -> Iterator[ImportRow]:
        """In the order an import takes them: lanes, jobs, memories, revisions, tombstones."""
        yield from self.lanes
        yield from self.jobs
        yield from self.memories
        yield from self.revisions
        yield from self.tombstones


class _Groups:
    """Union-find over the records' ids."""

    def __init__(self) -> None:
        self._parent: dict[_Node, _Node] = {}

    def find(self, node: _Node) -> _Node:
        parent = self._parent.setdefault(node, node)
        while parent != node:
            grand = self._parent[parent]
            self._parent[node] = grand  # path halving keeps long supersede chains flat
            node, parent = parent, grand
        return node

    def join(self, node: _Node, *others: tuple[str, str | None]) -> None:
        root = self.find(node)
        for kind, ref in others:
            if ref is not None:
                other = self.find((kind, ref))
                if other != root:
                    self._parent[other] = root


def _node(row: ImportRow) -> _Node:
    """The id a record belongs to: a revision and a tombstone go with their memory."""
    if isinstance(row, Job):
        return ("job", row.id)
    if isinstance(row, MemoryRecord):
        return ("memory", row.id)
    if isinstance(row, (RevisionRow, TombstoneRow)):
        return ("memory", row.memory_id)
    raise TypeError(f"no group for {type(row).__name__}")


def _links(row: ImportRow) -> list[tuple[str, str | None]]:
    """Every id the record names, as store/importing.py checks them."""
    if isinstance(row, Job):
        return [("memory", row.memory_id), ("job", row.source_job_id), *(("memory", m) for m in row.supersedes)]
    if isinstance(row, MemoryRecord):
        return [("job", row.source_job_id), ("memory", row.retired_into), ("memory", row.superseded_by)]
    if isinstance(row, RevisionRow):
        return [("job", row.job_id), *(("memory", m) for m in row.merged_ids)]
    if isinstance(row, TombstoneRow):
        return [("job", row.source_job_id), ("memory", row.retired_into)]
    return []


def batches(records: Records, size: int = BATCH_RECORDS) -> list[list[ImportRow]]:
    """The owner's records as batches of whole groups, each batch in import order; the lanes go
    with the first (a lane may have no record of its own left: everything in it forgotten)."""
    if size < 1:
        raise ValueError("a batch holds at least one record")
    groups = _Groups()
    rows = [row for row in records.rows() if not isinstance(row, LaneRow)]
    for row in rows:
        groups.join(_node(row), *_links(row))
    members: dict[_Node, list[int]] = {}  # group root -> positions of its rows, in order
    for position, row in enumerate(rows):
        members.setdefault(groups.find(_node(row)), []).append(position)
    out: list[list[ImportRow]] = []
    current: list[int] = []
    for positions in members.values():  # dicts keep insertion order: groups by their first record
        if current and len(current) + len(positions) > size:
            out.append([rows[p] for p in sorted(current)])
            current = []
        current.extend(positions)
    if current:
        out.append([rows[p] for p in sorted(current)])
    if records.lanes:
        if not out:
            out.append([])
        out[0][:0] = records.lanes
    return out
