from __future__ import annotations

import argparse

from ..schemas import RememberOut, remember_line
from ..service import MemoryService
from .output import add_json_flag, emit, filed_note

NAME = "remember"
HELP = "remember a fact (waits for curation by default)"
WORKER = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--key", dest="idempotency_key", default=None, help="idempotency key")
    parser.add_argument("--wait-ms", type=int, default=10000, help="wait for curation (default 10000)")
    parser.add_argument("--occurred-at", default=None, help="when it happened, ISO-8601 (default: now)")
    parser.add_argument(
        "--expires",
        dest="expires_at",
        default=None,
        help="when it stops being true, ISO-8601; a date alone means the end of that day, UTC (then recall omits it)",
    )
    parser.add_argument(
        "--supersedes",
        action="append",
        default=None,
        metavar="MEMORY_ID",
        help="a memory this fact replaces (repeat for several); undo of the new memory brings it back",
    )
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    outcome = await service.remember(
        service.settings.owner,
        args.text,
        args.namespace,
        args.idempotency_key,
        args.wait_ms,
        args.occurred_at,
        args.expires_at,
        args.supersedes,
    )
    out = RememberOut.of_outcome(outcome)
    emit(args, out.model_dump(), remember_line(out))


def interrupted(service: MemoryService, args: argparse.Namespace) -> str:
    return filed_note(service)
