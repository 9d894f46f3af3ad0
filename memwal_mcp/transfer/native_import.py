"""Read a memwal export back into a database, keeping ids; and wait for the vectors.

Rows keep their ids, and a row already present is skipped, so importing a file twice
changes nothing and a second run after an interruption picks up where the first
stopped. Each batch is validated completely before it is written in one
transaction: a malformed line stops the import with its line number, and nothing of
its batch is written.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from tqdm import tqdm

from ..errors import InvalidInput
from ..service import MemoryService
from ..store import memories
from ..store import transfer as store
from .format import Header, ImportFormatError, parse_header, parse_record, read_lines

log = logging.getLogger(__name__)

# Rows per write transaction: large enough to amortize the commit, small enough that
# the curation worker and recalls in other processes never wait long for the lock.
BATCH_ROWS = 250
# Give up waiting for vectors when none were added for this long (model gone, wrong dimension).
EMBED_STALL_S = 120.0


@dataclass(frozen=True, slots=True)
class ImportSummary:
    path: str
    kind: str
    owners: list[str]  # whose memory was written
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # already present (or forgotten here)
    failed: int = 0  # remember jobs that failed (foreign imports)


def _target_owners(path: Path, header: Header, owner: str | None) -> dict[str, str]:
    """Source owner -> owner to write under. `owner` None keeps the file's owners."""
    if owner is None:
        return {o: o for o in header.owners}
    if len(header.owners) > 1:
        raise InvalidInput(
            f"{path} holds the memory of {len(header.owners)} owners ({', '.join(header.owners)}); "
            "import it with --all-owners to keep them apart, or export one owner at a time"
        )
    return {o: owner for o in header.owners}


async def import_native(
    service: MemoryService,
    path: Path,
    owner: str | None,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> ImportSummary:
    """Import a memwal export. With `owner`, a one-owner file is written under that owner;
    with None, every record keeps the owner it has in the file."""
    added: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    lines = read_lines(path)
    with closing(lines):
        first = next(lines, (1, ""))[1]
        if not first.strip():
            raise ImportFormatError(f"{path} is empty: a memwal export starts with a header line")
        header = parse_header(path, first)
        owners = _target_owners(path, header, owner)
        total = sum(header.counts.values()) if header.counts else None
        with tqdm(total=total, desc="import", unit="record", file=sys.stderr, disable=not progress) as bar:
            batch: list[store.ImportRow] = []
            batch_start = line_no = 2
            for line_no, line in lines:
                if not line.strip():
                    continue
                row = parse_record(path, line_no, line)
                if row.owner not in owners:
                    raise ImportFormatError(
                        f"{path}, line {line_no}: record of owner {row.owner!r}, whom the header does not list"
                    )
                if owners[row.owner] != row.owner:
                    row = dataclasses.replace(row, owner=owners[row.owner])
                batch.append(row)
                seen[_kind(row)] += 1
                if len(batch) >= batch_rows:
                    await _write(service, path, batch, (batch_start, line_no), added, skipped)
                    bar.update(len(batch))
                    batch, batch_start = [], line_no + 1
            await _write(service, path, batch, (batch_start, line_no), added, skipped)
            bar.update(len(batch))
    service.worker.wake()  # imported memories need vectors; imported queued jobs need curating
    if header.counts is not None and {k: v for k, v in header.counts.items() if v} != dict(seen):
        expected = sum(header.counts.values())
        raise ImportFormatError(
            f"{path} holds {sum(seen.values())} records but its header lists {expected}: the file is incomplete "
            "(was the export interrupted?). What it holds was imported; import the complete file to finish."
        )
    return ImportSummary(str(path), "memwal", sorted(set(owners.values())), dict(added), dict(skipped))


async def _write(
    service: MemoryService,
    path: Path,
    batch: list[store.ImportRow],
    lines: tuple[int, int],
    added: Counter[str],
    skipped: Counter[str],
) -> None:
    """One batch, one transaction; then forget what the file's tombstones say is forgotten."""
    if not batch:
        return
    try:
        outcome = await service.db.write(store.import_batch, batch)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}, lines {lines[0]}-{lines[1]}: {exc}") from exc
    for owner, memory_id in outcome.to_forget:
        await service.forget(owner, memory_id)
    added.update(outcome.added)
    skipped.update(outcome.skipped)


def _kind(row: store.ImportRow) -> str:
    return {
        store.LaneRow: "lane",
        store.MemoryRecord: "memory",
        store.RevisionRow: "revision",
        store.TombstoneRow: "tombstone",
    }.get(type(row), "job")


async def wait_until_embedded(
    service: MemoryService, owners: list[str] | None, progress: bool = False, stall_s: float = EMBED_STALL_S
) -> int:
    """Wait until these owners' live memories all have vectors; returns how many still lack one.

    The curation worker's backlog pass gives them vectors. Without a usable model
    there is nothing to wait for: recall scores those memories directly.
    """
    embedder = await service.embedder.get()
    if embedder is None:
        return await service.db.read(store.unembedded_count, owners)
    stored = await service.db.read(memories.vector_model)
    if stored is not None and stored[1] != embedder.dim:
        return await service.db.read(store.unembedded_count, owners)
    remaining = await service.db.read(store.unembedded_count, owners)
    if not remaining:
        return 0
    service.worker.wake()
    last, last_change = remaining, time.monotonic()
    with tqdm(total=remaining, desc="embedding", unit="memory", file=sys.stderr, disable=not progress) as bar:
        while remaining:
            await anyio.sleep(0.1)
            now = await service.db.read(store.unembedded_count, owners)
            if now > last:  # more memories arrived meanwhile (another import, an undo)
                bar.total += now - last
                bar.refresh()
            elif now < last:
                bar.update(last - now)
                last_change = time.monotonic()
            elif time.monotonic() - last_change > stall_s:
                log.warning(
                    "%d imported memories still have no vector after %.0f s without progress; "
                    "recall scores them directly until a server embeds them", now, stall_s,
                )
                break
            remaining = last = now
    return remaining
