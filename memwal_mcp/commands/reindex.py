from __future__ import annotations

import argparse
import sys

from ..errors import InvalidInput
from ..service import MemoryService
from ..wording import counted
from .output import add_json_flag, emit

NAME = "reindex"
HELP = "re-embed every memory with the configured model (resumable; servers keep answering meanwhile)"
WORKER = False
MAX_BATCH = 100_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch-size", type=int, default=256, help=f"memories embedded per step, 1 to {MAX_BATCH} (default 256)"
    )
    parser.add_argument(
        "--progress", action="store_true", help="show a progress bar even when stderr is not a terminal"
    )
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    from tqdm import tqdm

    # 0 read no rows and reported every memory as "changed meanwhile"; a negative one is no size.
    if not 1 <= args.batch_size <= MAX_BATCH:
        raise InvalidInput(f"--batch-size must be an integer from 1 to {MAX_BATCH}, got {args.batch_size}")

    bar = tqdm(total=0, unit="memories", file=sys.stderr, disable=not (args.progress or sys.stderr.isatty()))

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        done, left = await service.reindex(args.batch_size, progress)
    finally:
        bar.close()
    model = service.settings.embedding.model
    emit(
        args,
        {"model": model, "reembedded": done, "left_for_worker": left},
        f"re-embedded {counted(done, 'memory')} with {model}"
        + (f"; {left} changed meanwhile and will be embedded by the worker" if left else ""),
    )
