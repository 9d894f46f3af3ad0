"""Write an owner's memory (or every owner's) to a memwal export file.

The whole export is read in one snapshot on the store's reader connection and
streamed line by line, so the file is consistent and memory use stays flat. It is
written next to its destination and renamed into place at the end: an interrupted
export never leaves a file that looks complete, and the destination is checked with
the same rules as a backup's (store/backup.py) so an export can never overwrite the
database it reads.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import BaseModel
from tqdm import tqdm

from .. import __version__
from ..errors import InvalidInput
from ..service import MemoryService
from ..store import StoreReader
from ..store.files import check_destination, place, reserve_staging
from .format import Header, JobLine, LaneLine, MemoryLine, RevisionLine, TombstoneLine, dump

# Progress is advanced once per this many records (tqdm per line would cost more than the write).
_TICK = 200


@dataclass(frozen=True, slots=True)
class ExportSummary:
    path: str
    owners: list[str]
    counts: dict[str, int]


def _records(reader: StoreReader, owner: str | None) -> Iterator[BaseModel]:
    yield from (LaneLine(owner=r.owner, namespace=r.namespace) for r in reader.iter_lanes(owner))
    yield from (JobLine.of(j) for j in reader.iter_jobs(owner))
    yield from (MemoryLine.of(m) for m in reader.iter_memories(owner))
    yield from (RevisionLine.of(r) for r in reader.iter_revisions(owner))
    yield from (TombstoneLine.of(t) for t in reader.iter_tombstones(owner))


def _write(reader: StoreReader, owner: str | None, out: IO[str], progress: bool) -> tuple[list[str], dict]:
    """Runs on the reader connection's thread: one snapshot from header to last record."""
    with reader.snapshot():
        counts = reader.export_counts(owner)
        owners = reader.exported_owners(owner)
        model = reader.vector_model()
        header = Header(
            exported_at=time.time(),
            generator=f"memwal-mcp {__version__}",
            owners=owners,
            counts=counts,
            vector_model=model[0] if model else None,
        )
        out.write(dump(header) + "\n")
        with tqdm(
            total=sum(counts.values()), desc="export", unit="record", file=sys.stderr, disable=not progress
        ) as bar:
            pending = 0
            for record in _records(reader, owner):
                out.write(dump(record) + "\n")
                pending += 1
                if pending == _TICK:
                    bar.update(pending)
                    pending = 0
            bar.update(pending)
    return owners, counts


async def export_memories(
    service: MemoryService,
    destination: Path | IO[str],
    owner: str | None,
    progress: bool = False,
    *,
    force: bool = False,
) -> ExportSummary:
    """Export `owner`'s memory (None: every owner's) to a file path, or to an open text stream.

    A path is checked like a backup's (never the database or its sidecars, never an existing
    file unless `force`), written beside itself and renamed into place when complete.
    """
    if not isinstance(destination, Path):
        try:
            owners, counts = await service.store.read(_write, owner, destination, progress)
            destination.flush()
        except BrokenPipeError:  # the reader stopped (`export - | head`): the CLI ends quietly
            raise
        except OSError as exc:  # a closed pipe (`export - | head`), a full disk
            raise InvalidInput(
                f"cannot write the export to {_stream_name(destination)}: {exc.strerror or exc}"
            ) from exc
        return ExportSummary("-", owners, counts)
    destination = check_destination(destination, service.store.own_files(), force=force, what="export")
    partial = reserve_staging(destination, "export")
    try:
        try:
            with partial.open("w", encoding="utf-8", newline="\n") as handle:
                owners, counts = await service.store.read(_write, owner, handle, progress)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:  # disk full, the folder removed meanwhile
            raise InvalidInput(f"cannot write the export to {destination}: {exc.strerror or exc}") from exc
        place(partial, destination, force, "export")
    finally:
        partial.unlink(missing_ok=True)
    return ExportSummary(str(destination), owners, counts)


def _stream_name(stream: IO[str]) -> str:
    return "stdout" if stream is sys.stdout else str(getattr(stream, "name", "the stream"))
