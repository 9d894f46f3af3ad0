from __future__ import annotations

import argparse

from ..schemas import HistoryOut, history_text
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "history"
HELP = "revisions and remember jobs of a memory"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("memory_id")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    out = HistoryOut.of(await service.history(service.settings.owner, args.memory_id))
    emit(args, out.model_dump(), history_text(out))
