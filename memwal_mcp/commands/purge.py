from __future__ import annotations

import argparse

from ..errors import InvalidInput
from ..schemas import ForgetOut
from ..service import MemoryService
from . import forget
from .output import add_json_flag, emit

NAME = "purge"
HELP = "erase expired memories as forget does (--expired; --dry-run lists them)"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expired", action="store_true", help="erase every memory past its expiry")
    parser.add_argument("--dry-run", action="store_true", help="only list what would be erased")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    if not args.expired:
        raise InvalidInput("say what to purge: --expired")
    owner = service.settings.owner
    if args.dry_run:
        ids = await service.expired(owner)
        emit(args, {"would_forget": ids}, "\n".join(["would forget:", *ids]) if ids else "nothing has expired.")
        return
    outs = await forget._settle(service, [ForgetOut.of(done) for done in await service.purge_expired(owner)])
    emit(
        args,
        [o.model_dump() for o in outs],
        "\n".join(o.summary() for o in outs) or "nothing has expired.",
    )
    forget._warn_if_kept(service, outs)
