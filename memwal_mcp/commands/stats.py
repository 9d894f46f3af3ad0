from __future__ import annotations

import argparse
from dataclasses import asdict

from ..service import MemoryService
from ..wording import counted
from .output import add_json_flag, emit

NAME = "stats"
HELP = "queue state and curation counters"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    stats = await service.stats()
    model = f"{stats.vector_model[0]} ({stats.vector_model[1]} dims)" if stats.vector_model else "none yet"
    lines = [
        f"database: {stats.db_path}",
        f"vectors:  {model}",
        "queue:    " + (", ".join(f"{k}={v}" for k, v in sorted(stats.queue.items())) or "empty"),
        "curation markers:",
    ]
    lines += [f"  {marker:<40} {count}" for marker, count in stats.counters.items()] or ["  (none yet)"]
    if stats.nominations_to_count:
        lines.append(f"  (nominees of {counted(stats.nominations_to_count, 'new memory')} still to be counted)")
    emit(args, asdict(stats), "\n".join(lines))
