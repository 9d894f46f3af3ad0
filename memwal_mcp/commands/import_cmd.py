from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

from ..service import MemoryService
from ..transfer import import_file, wait_until_embedded
from ..wording import agree, counted
from .export_cmd import counts_text
from .output import add_json_flag, emit

NAME = "import"
HELP = "import a memwal export, a memory.json of the MCP memory server, or text/Markdown notes"
WORKER = True  # curates foreign items and gives imported memories their vectors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the file to import; re-running it adds nothing twice")
    parser.add_argument(
        "--format",
        choices=["auto", "memwal", "memory-json", "text"],
        default="auto",
        help="what the file is (default: auto, by its first line and extension)",
    )
    parser.add_argument("--namespace", default=None, help="where memory.json and text items go (default 'default')")
    parser.add_argument(
        "--all-owners",
        action="store_true",
        help="a memwal export of several owners: keep each record's owner (default: import under --owner)",
    )
    parser.add_argument("--progress", action="store_true", help="show progress bars even when stderr is no terminal")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    progress = args.progress or sys.stderr.isatty()
    summary = await import_file(
        service,
        args.file,
        kind=args.format,
        owner=service.settings.owner,
        all_owners=args.all_owners,
        namespace=args.namespace,
        progress=progress,
    )
    # A recall right after the import should find everything through the vector index.
    unembedded = await wait_until_embedded(service, summary.owners, progress)
    data = {**asdict(summary), "unembedded": unembedded}
    emit(args, data, _text(summary.kind, summary.owners, summary.added, summary.skipped, summary.failed, unembedded))


def _text(kind: str, owners: list[str], added: dict, skipped: dict, failed: int, unembedded: int) -> str:
    lines = [f"imported {kind} file for {', '.join(owners) or 'no owner'}: added {counts_text(added)}"]
    if skipped:
        # Skipped rows are those this store already holds and those it forgot (a tombstone
        # keeps a forgotten record from coming back): both must be named, or a re-import
        # after a forget reads as if the forgotten memory were still here.
        lines.append(f"already here or forgotten here (skipped): {counts_text(skipped)}")
    if failed:
        lines.append(f"{counted(failed, 'item')} could not be remembered (their remember jobs failed)")
    if unembedded:
        have = agree(unembedded, "has", "have")
        lines.append(f"{counted(unembedded, 'memory')} {have} no vector yet; recall scores them directly until then")
    return "\n".join(lines)


def interrupted(service: MemoryService, args: argparse.Namespace) -> str:
    """Each part of an import commits as a whole and is recognised when imported again."""
    return "what it imported so far is kept; running the same import again adds only the rest"
