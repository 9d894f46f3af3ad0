"""Moving memory in and out: memwal exports (JSON Lines, versioned; docs/export-format.md),
the official MCP memory server's memory.json, and plain text or Markdown notes.

    export.py           write an export (one snapshot, streamed)
    native_import.py    read an export back, ids kept, re-runs are no-ops
    chains.py           a file's retired memories lead somewhere, never round in a loop
    foreign_import.py   memory.json and text/Markdown through the remember path
    format.py           the record models, the version, telling input files apart
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ..errors import InvalidInput
from ..service import MemoryService
from ..store.files import is_database_file
from .export import ExportSummary, export_memories
from .foreign_import import import_memory_json, import_text
from .format import VERSION, ImportFormatError, InputKind, detect_kind
from .native_import import ImportSummary, import_native, wait_until_embedded

__all__ = [
    "VERSION",
    "ExportSummary",
    "ImportFormatError",
    "ImportSummary",
    "export_memories",
    "import_file",
    "wait_until_embedded",
]


async def import_file(
    service: MemoryService,
    path: Path,
    *,
    kind: InputKind | Literal["auto"] = "auto",
    owner: str,
    all_owners: bool = False,
    namespace: str | None = None,
    progress: bool = False,
) -> ImportSummary:
    """Import any supported file. `owner` receives the memory; with `all_owners`, a memwal
    export keeps the owners it holds (foreign files always belong to `owner`). `namespace`
    (default 'default') is where foreign items go; an export keeps its own namespaces."""
    path = path.expanduser()
    if not path.is_file():
        raise InvalidInput(f"{path} does not exist or is not a file")
    if any(is_database_file(path, own) for own in service.store.own_files()):
        raise InvalidInput(f"{path} is the database itself (or one of its -wal/-shm files); import an export file")
    if kind == "auto":
        kind = detect_kind(path)
    if kind == "memwal":
        if namespace is not None:
            raise InvalidInput("--namespace applies to foreign files only; a memwal export keeps its namespaces")
        return await import_native(service, path, None if all_owners else owner, progress)
    namespace = namespace or "default"
    if all_owners:
        raise InvalidInput("--all-owners applies to memwal exports only; a foreign file is imported for one owner")
    if kind == "memory-json":
        return await import_memory_json(service, path, owner, namespace, progress)
    return await import_text(service, path, owner, namespace, progress)
