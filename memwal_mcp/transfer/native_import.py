"""Read a memwal export back into a database, keeping ids; and wait for the vectors.

Rows keep their ids, and a row already present is skipped, so importing a file twice
changes nothing. The whole file is written in one transaction, parsed as it is read:
a malformed line, a record that names another owner's id, a retired memory that leads
nowhere or round in a loop (chains.py), or a file shorter than its header says stops the
import with the line, and nothing of the file is stored.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from tqdm import tqdm

from .. import validation
from ..errors import InvalidInput
from ..records import Job
from ..service import MemoryService
from ..store.records import ImportRow, LaneRow, MemoryRecord, RecordRefused, RevisionRow, TombstoneRow
from .chains import Chains
from .format import Header, ImportFormatError, parse_header, parse_record, read_lines

log = logging.getLogger(__name__)

# Give up waiting for vectors when none were added for this long (model gone, wrong dimension).
EMBED_STALL_S = 120.0
# Progress is advanced once per this many records.
_TICK = 200


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


@dataclass(frozen=True, slots=True)
class _FileRecords:
    """The file's records under their target owners, as (line, row). Read on the writer's
    thread inside the import's transaction, so an error here rolls back what came before
    it; each iteration reads the file from the top, so a retried transaction starts over."""

    path: Path
    header: Header
    owners: dict[str, str]
    bar: tqdm
    max_text_bytes: int

    def __iter__(self) -> Iterator[tuple[int, ImportRow]]:
        self.bar.reset(total=self.bar.total)
        seen: Counter[str] = Counter()
        chains = Chains(self.path)
        pending = 0
        with closing(read_lines(self.path)) as lines:
            next(lines, None)  # the header, parsed before
            for line_no, line in lines:
                if not line.strip():
                    continue
                row = parse_record(self.path, line_no, line)
                _check_texts(self.path, line_no, row, self.max_text_bytes)
                if row.owner not in self.owners:
                    raise ImportFormatError(
                        f"{self.path}, line {line_no}: record of owner {row.owner!r}, whom the header does not list"
                    )
                if self.owners[row.owner] != row.owner:
                    row = dataclasses.replace(row, owner=self.owners[row.owner])
                chains.see(line_no, row)
                seen[_kind(row)] += 1
                yield line_no, row
                pending += 1
                if pending == _TICK:
                    self.bar.update(pending)
                    pending = 0
        self.bar.update(pending)
        counts = self.header.counts
        if counts is not None and {k: v for k, v in counts.items() if v} != dict(seen):
            raise ImportFormatError(
                f"{self.path} holds {sum(seen.values())} records but its header lists {sum(counts.values())}: the"
                " file is incomplete (was the export interrupted?); nothing was imported"
            )
        chains.close()


def _check_texts(path: Path, line_no: int, row: ImportRow, max_bytes: int) -> None:
    """Hold every imported text to the rules of a remember (validation.text): a crafted file
    must not store control characters, invisible or oversized text that no tool would take.
    Only a forgotten memory's jobs are empty, as the export writes them."""
    texts: list[tuple[str, object]] = []
    if isinstance(row, Job):
        if not (row.decision == "forgotten" and row.text == ""):
            texts.append(("job text", row.text))
    elif isinstance(row, MemoryRecord):
        texts.append(("memory body", row.body))
    elif isinstance(row, RevisionRow):
        texts.append(("revision body", row.body))
    try:
        for name, value in texts:
            validation.text(
                value,
                max_bytes,
                name=name,
                hint="a memwal export never holds an empty one",
                shorten="raise [limits] max_text_bytes to import it",
            )
        if isinstance(row, Job):
            validation.idempotency_key(row.idempotency_key)
    except InvalidInput as exc:
        raise ImportFormatError(f"{path}, line {line_no}: {exc}; nothing was imported") from None


def _header(path: Path) -> Header:
    with closing(read_lines(path)) as lines:
        first = next(lines, (1, ""))[1]
    if not first.strip():
        raise ImportFormatError(f"{path} is empty: a memwal export starts with a header line")
    return parse_header(path, first)


async def import_native(service: MemoryService, path: Path, owner: str | None, progress: bool = False) -> ImportSummary:
    """Import a memwal export. With `owner`, a one-owner file is written under that owner;
    with None, every record keeps the owner it has in the file."""
    header = _header(path)
    owners = _target_owners(path, header, owner)
    total = sum(header.counts.values()) if header.counts else None
    with tqdm(total=total, desc="import", unit="record", file=sys.stderr, disable=not progress) as bar:
        try:
            records = _FileRecords(path, header, owners, bar, service.settings.limits.max_text_bytes)
            outcome = await service.store.write(lambda writer: writer.import_rows(records))
        except RecordRefused as exc:
            line = exc.line if exc.line is not None else _line_of(path, exc.kind, exc.key)
            where = f"{path}, line {line}" if line is not None else str(path)
            raise ImportFormatError(f"{where}: {exc.reason}; nothing was imported") from None
    for target, memory_id in outcome.to_forget:
        await service.forget(target, memory_id, retired_too=True)  # the source forgot it: so must this one
    service.worker.wake()  # imported memories need vectors; imported queued jobs need curating
    return ImportSummary(str(path), "memwal", sorted(set(owners.values())), outcome.added, outcome.skipped)


def _line_of(path: Path, kind: str | None, key: dict[str, object]) -> int | None:
    """The line of the record a refusal names (looked up only when something was refused).
    A forgotten memory's row comes from its tombstone, which names it `memory_id`."""
    wanted = [(kind, key)]
    if kind == "memory":
        wanted.append(("tombstone", {"memory_id": key.get("id")}))
    for line_no, line in read_lines(path):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and any(
            value.get("type") == k and all(value.get(name) == v for name, v in fields.items()) for k, fields in wanted
        ):
            return line_no
    return None


def _kind(row: ImportRow) -> str:
    return {
        LaneRow: "lane",
        MemoryRecord: "memory",
        RevisionRow: "revision",
        TombstoneRow: "tombstone",
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
        return await service.store.read(lambda reader: reader.unembedded_count(owners))
    stored = await service.store.read(lambda reader: reader.vector_model())
    if stored is not None and stored[1] != embedder.dim:
        return await service.store.read(lambda reader: reader.unembedded_count(owners))
    remaining = await service.store.read(lambda reader: reader.unembedded_count(owners))
    if not remaining:
        return 0
    service.worker.wake()
    last, last_change = remaining, time.monotonic()
    with tqdm(total=remaining, desc="embedding", unit="memory", file=sys.stderr, disable=not progress) as bar:
        while remaining:
            await anyio.sleep(0.1)
            now = await service.store.read(lambda reader: reader.unembedded_count(owners))
            if now > last:  # more memories arrived meanwhile (another import, an undo)
                bar.total += now - last
                bar.refresh()
            elif now < last:
                bar.update(last - now)
                last_change = time.monotonic()
            elif time.monotonic() - last_change > stall_s:
                log.warning(
                    "%d imported memories still have no vector after %.0f s without progress; "
                    "recall scores them directly until a server embeds them",
                    now,
                    stall_s,
                )
                break
            remaining = last = now
    return remaining
