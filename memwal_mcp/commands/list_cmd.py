from __future__ import annotations

import argparse

from ..schemas import ListOut, list_text
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "list"
HELP = "list memories, newest first"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", default="*", help="one namespace, or '*' (default) for all")
    parser.add_argument("--since", default=None, help="only memories from this ISO-8601 date or time on")
    parser.add_argument("--until", default=None, help="only memories up to this ISO-8601 date or time")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--cursor", default=None, help="continue from a previous page")
    # As memwal_list: left out (default), listed too and marked, or "only" those.
    parser.add_argument(
        "--include-expired",
        nargs="?",
        const=True,
        default=False,
        choices=["only"],
        metavar="only",
        help="also memories past their expiry (marked); 'only' for only those",
    )
    parser.add_argument(
        "--include-superseded",
        nargs="?",
        const=True,
        default=False,
        choices=["only"],
        metavar="only",
        help="also memories another fact replaced (marked); 'only' for only those",
    )
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    page = await service.list(
        service.settings.owner,
        args.namespace,
        args.cursor,
        args.limit,
        args.since,
        args.include_expired,
        args.include_superseded,
        args.until,
    )
    out = ListOut.of(page)
    emit(args, out.model_dump(), list_text(out))
