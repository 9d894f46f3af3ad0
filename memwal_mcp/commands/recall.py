from __future__ import annotations

import argparse

from ..recall.format import recall_text
from ..schemas import RecallOut
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "recall"
HELP = "recall the facts most relevant to a query"
WORKER = True  # curates anything still queued, so the answer includes it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query")
    parser.add_argument("--limit", type=int, default=None, help="distinct facts to return (1-100, default 5)")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--min-score", type=float, default=None)
    parser.add_argument("--since", default=None, help="only facts from this ISO-8601 date or time on")
    parser.add_argument(
        "--until",
        default=None,
        help="only facts up to this ISO-8601 date or time (all of its last day, minute or second)",
    )
    parser.add_argument("--prefer-recent", action="store_true", help="rank newer facts higher")
    parser.add_argument("--include-expired", action="store_true", help="also facts past their expiry (marked)")
    parser.add_argument("--include-superseded", action="store_true", help="also facts another one replaced (marked)")
    parser.add_argument("--max-chars", type=int, default=None, help="keep the hit lines within this many characters")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    result = await service.recall(
        service.settings.owner,
        args.query,
        args.limit,
        args.namespace,
        args.min_score,
        args.since,
        args.until,
        args.prefer_recent,
        args.include_expired,
        args.include_superseded,
        args.max_chars,
    )
    emit(args, RecallOut.of(result).model_dump(), recall_text(result))
