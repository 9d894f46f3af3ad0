"""What an import checks against the memories already stored, written once for every backend:
it asks the store's reader (the contract), never SQL, inside the import's own transaction.

A job's `supersedes` must name memories of the job's owner: in the file, or in the database
(live, retired or forgotten: what became of a memory after a fact named it is history, not an
error). An unknown id, or another owner's, is refused as `memwal_remember` refuses it. What
`memwal_remember` refuses beyond that -- naming a memory that is not live -- is not refused
here: an export is taken later than the remember, when the named memory may since have been
superseded by this very job, merged, forgotten or brought back by undo.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..records import Job
from .contract import StoreReader
from .records import ImportRow, MemoryRecord, RecordRefused, TombstoneRow


def checked(rows: Iterable[tuple[int, ImportRow]], reader: StoreReader) -> Iterator[tuple[int, ImportRow]]:
    """`rows` as they come; once the last one has been written (the transaction still open,
    so a refusal rolls the whole import back), the references only the store can answer."""
    # (owner, memory id) -> (line, job id) of the first job naming it
    named: dict[tuple[str, str], tuple[int, str]] = {}
    in_file: set[tuple[str, str]] = set()
    for line, row in rows:
        if isinstance(row, Job):
            for memory_id in row.supersedes:
                named.setdefault((row.owner, memory_id), (line, row.id))
        elif isinstance(row, MemoryRecord):
            in_file.add((row.owner, row.id))
        elif isinstance(row, TombstoneRow):
            in_file.add((row.owner, row.memory_id))
        yield line, row
    for (owner, memory_id), (line, job_id) in named.items():
        if (owner, memory_id) not in in_file and reader.memory_by_id(owner, memory_id) is None:
            raise RecordRefused(
                f"job {job_id!r}: its supersedes names memory {memory_id!r}, which is no memory of {owner!r}"
                " in the file or in this database",
                line=line,
                kind="job",
                key={"id": job_id},
            )
