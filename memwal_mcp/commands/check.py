from __future__ import annotations

import argparse
import time
from dataclasses import asdict

from ..service import MemoryService
from ..store import StoreReader
from ..store.records import Problem, StoreCounts, summary_line
from .output import EXIT_FAILED, add_json_flag, emit

NAME = "check"
HELP = "verify the store: journal and memories agree, indexes complete, no crossed lanes, SQLite integrity"
WORKER = False

# The CLI opens (and so creates) the database before a command runs; a database
# first migrated after this module was imported did not exist when check was asked.
_STARTED = time.time()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_flag(parser)


def _check(reader: StoreReader) -> tuple[list[Problem], StoreCounts, float | None]:
    problems, counts = reader.check()
    return problems, counts, reader.created_at()


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    problems, counts, created = await service.store.read(_check)
    if created is not None and created >= _STARTED:
        problems.insert(
            0,
            Problem(
                "error",
                "database_missing",
                f"there was no database at {service.store.location} (an empty one was created)",
            ),
        )
    summary = summary_line(problems, counts)
    failed = any(p.severity == "error" for p in problems)
    data = {
        "ok": not failed,
        "database": service.store.location,
        "problems": [asdict(p) for p in problems],
        "counts": asdict(counts),
        "summary": summary,
    }
    emit(args, data, "\n".join([*(p.line() for p in problems), summary]))
    if failed:
        raise SystemExit(EXIT_FAILED)
