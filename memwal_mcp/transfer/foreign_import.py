"""Import what other tools wrote: the official MCP memory server's memory.json, and
plain text or Markdown notes.

These go through the real remember path, so curation folds them like any other
fact. Every item's idempotency key is derived from the file's content hash, the
namespace, the item's position and its text: re-running an import (or finishing an
interrupted one) replays the jobs already made instead of making new ones. The whole
file is parsed and checked before the first remember, so a malformed line stops the
import with nothing written.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from .. import validation
from ..errors import InvalidInput
from ..service import MemoryService
from .format import Entity, ImportFormatError, Relation, parse_graph_item, read_lines, read_text
from .native_import import ImportSummary

# Job ids per status call (the service's limit).
CHUNK = validation.MAX_JOB_IDS


@dataclass(frozen=True, slots=True)
class Item:
    line: int  # where it starts in the file (1-based), for error messages
    text: str


# --- memory.json -------------------------------------------------------------


def memory_json_items(path: Path) -> list[Item]:
    """One item per entity (its name, type and observations) and per relation ("A works_at B")."""
    items: list[Item] = []
    for line_no, line in read_lines(path):
        if line.strip():
            thing: Entity | Relation = parse_graph_item(path, line_no, line)
            items.append(Item(line_no, thing.text()))
    return items


# --- text and Markdown -------------------------------------------------------

_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_BREAK = re.compile(r"^\s{0,3}([-*_=])(\s*\1){2,}\s*$")  # --- *** ___ ===: a rule or a setext underline
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def text_items(text: str) -> list[Item]:
    """One item per paragraph and per bullet (numbered or not). Headings, rules and YAML
    front matter are structure, not facts: they are left out. A fenced code block stays
    whole. Lines of one item are kept as they were, without their indentation."""
    lines = text.splitlines()
    items: list[Item] = []
    current: list[str] = []
    start = 0
    is_bullet = False

    def flush() -> None:
        nonlocal current
        body = "\n".join(current).strip()
        if body:
            items.append(Item(start, body))
        current = []

    index = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                index = end + 1
                break
    while index < len(lines):
        line, line_no = lines[index], index + 1
        index += 1
        fence = _FENCE.match(line)
        if fence:
            flush()
            start, block = line_no, [line.rstrip()]
            while index < len(lines):
                block.append(lines[index].rstrip())
                index += 1
                if lines[index - 1].strip().startswith(fence.group(1)):
                    break
            current = block
            flush()
            continue
        if not line.strip():
            flush()
        elif _HEADING.match(line):
            flush()
        elif _BREAK.match(line):
            if current and len(current) == 1 and not is_bullet and line.strip()[0] in "=-":
                current = []  # setext heading: the line above was a title
            flush()
        elif bullet := _BULLET.match(line):
            flush()
            start, current, is_bullet = line_no, [bullet.group(1)], True
        else:
            if not current:
                start, is_bullet = line_no, False
            current.append(line.strip())
    flush()
    return items


# --- remembering -------------------------------------------------------------


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def item_key(file_hash: str, namespace: str, position: int, text: str) -> str:
    """The idempotency key of one imported item: same file, namespace, position and text -> same key."""
    material = f"{file_hash}\0{namespace}\0{position}\0{text}".encode()
    return "import:" + hashlib.sha256(material).hexdigest()[:40]


async def import_items(
    service: MemoryService,
    path: Path,
    kind: str,
    items: list[Item],
    owner: str,
    namespace: str,
    progress: bool = False,
) -> ImportSummary:
    lane = validation.namespace(namespace)
    limit = service.settings.limits.max_text_bytes
    for item in items:  # check all before writing any
        try:
            validation.text(item.text, limit)
        except InvalidInput as exc:
            raise ImportFormatError(f"{path}, line {item.line}: {exc}") from None
    file_hash = _file_hash(path)
    outcomes: Counter[str] = Counter()
    failed = 0
    with tqdm(total=len(items), desc="import", unit="item", file=sys.stderr, disable=not progress) as bar:
        for first in range(0, len(items), CHUNK):
            chunk = items[first : first + CHUNK]
            job_ids = []
            for position, item in enumerate(chunk, start=first):
                key = item_key(file_hash, lane, position, item.text)
                outcome = await service.remember(owner, item.text, lane, idempotency_key=key)
                outcomes["replayed" if outcome.replayed else "new"] += 1
                job_ids.append(outcome.job.id)
            while True:
                jobs = await service.status(owner, job_ids, validation.MAX_WAIT_MS)
                if all(job.status != "queued" for job in jobs):
                    break
            failed += sum(job.status == "failed" for job in jobs)
            bar.update(len(chunk))
    added = {"job": outcomes["new"]} if outcomes["new"] else {}
    skipped = {"job": outcomes["replayed"]} if outcomes["replayed"] else {}
    return ImportSummary(str(path), kind, [owner], added, skipped, failed)


async def import_memory_json(
    service: MemoryService, path: Path, owner: str, namespace: str = "default", progress: bool = False
) -> ImportSummary:
    return await import_items(service, path, "memory-json", memory_json_items(path), owner, namespace, progress)


async def import_text(
    service: MemoryService, path: Path, owner: str, namespace: str = "default", progress: bool = False
) -> ImportSummary:
    return await import_items(service, path, "text", text_items(read_text(path)), owner, namespace, progress)
