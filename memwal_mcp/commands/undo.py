from __future__ import annotations

import argparse

from ..schemas import UndoOut
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "undo"
HELP = "restore a memory's previous body (and bring back what a merge folded in)"
WORKER = True  # restored memories get their vectors before the command exits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("memory_id")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    out = UndoOut.of(await service.undo(service.settings.owner, args.memory_id))
    emit(args, out.model_dump(), out.summary())
