from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path

from ..errors import InvalidInput
from ..service import MemoryService
from ..transfer import export_memories
from ..wording import counted
from .output import add_json_flag, emit

NAME = "export"
HELP = "write memories, journal, revisions and tombstones to a JSONL file (docs/export-format.md)"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the JSONL file to write, or '-' for stdout")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    parser.add_argument(
        "--all-owners", action="store_true", help="export every owner in the database (default: --owner's only)"
    )
    parser.add_argument("--progress", action="store_true", help="show a progress bar even when stderr is no terminal")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    owner = None if args.all_owners else service.settings.owner
    progress = args.progress or sys.stderr.isatty()
    if args.file == "-":
        try:
            summary = await export_memories(service, sys.stdout, owner, progress)
        except (InvalidInput, BrokenPipeError):
            # What is left in stdout's buffer cannot be written either; without this the
            # interpreter's exit would print a second error about flushing it.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise
        # stdout holds the export; the summary goes to stderr.
        print(_text(summary.owners, summary.counts, "stdout"), file=sys.stderr)
        return
    summary = await export_memories(service, Path(args.file), owner, progress, force=args.force)
    emit(args, asdict(summary), _text(summary.owners, summary.counts, summary.path))


def counts_text(counts: dict[str, int]) -> str:
    """ "3 jobs, 1 memory, 2 memories": record counts for people."""
    parts = [counted(n, kind) for kind, n in counts.items()]
    return ", ".join(parts) or "nothing"


def _text(owners: list[str], counts: dict[str, int], where: str) -> str:
    return f"exported {counts_text(counts)} of {', '.join(owners) or 'no owner'} to {where}"
