from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from ..errors import InvalidInput
from ..service import MemoryService
from ..store.records import summary_line
from .output import EXIT_FAILED, add_json_flag, emit

NAME = "backup"
HELP = "copy the database consistently while servers keep running (SQLite online backup), then check the copy"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the file to write the copy to (not '-': a backup is a database file)")
    parser.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    parser.add_argument("--no-check", dest="verify", action="store_false", help="do not run `check` on the copy")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    if args.path == "-":  # `export -` means stdout; a database copy cannot be streamed
        raise InvalidInput(
            "backup cannot write to stdout ('-'): give a file name for the copy (e.g. ./memwal-backup.db)"
        )
    result = await service.store.backup(Path(args.path), force=args.force, verify=args.verify)
    failed = any(p.severity == "error" for p in result.problems)
    lines = [
        f"backed up {result.source} to {result.path} ({result.bytes / 1e6:.1f} MB, {result.counts.summary()})"
        f" in {result.seconds:.2f} s"
    ]
    if args.verify:
        lines += [p.line() for p in result.problems]
        lines.append("the copy: " + summary_line(result.problems, result.counts))
        if failed:
            lines.append("the copy is exact, so the source has these problems too: run `memwal-mcp check` on it")
    data = {
        "source": str(result.source),
        "path": str(result.path),
        "bytes": result.bytes,
        "seconds": round(result.seconds, 3),
        "counts": asdict(result.counts),
        "checked": args.verify,
        "problems": [asdict(p) for p in result.problems],
    }
    emit(args, data, "\n".join(lines))
    if failed:
        raise SystemExit(EXIT_FAILED)
