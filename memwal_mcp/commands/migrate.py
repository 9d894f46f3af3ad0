"""`memwal-mcp migrate --to postgresql://... [--db FILE]`: move a SQLite file into PostgreSQL
(transfer/migrate.py does the work; this prints it)."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict

from ..config import Settings, database_url_rule
from ..errors import InvalidInput, MemwalError
from ..transfer.batches import BATCH_RECORDS
from ..transfer.migrate import SHOWN, MigrationReport, migrate
from .export_cmd import counts_text
from .output import add_json_flag, emit

NAME = "migrate"
HELP = "move a SQLite file's memory (journal, revisions, tombstones, vectors, tokens) into PostgreSQL, verified"


class NotVerified(MemwalError):
    """The stores differ after a migration; the message names how."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, metavar="URL", help="postgresql://user:pass@host:port/db to move into")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=BATCH_RECORDS,
        metavar="N",
        help=f"records per transaction (default {BATCH_RECORDS}); a group of linked records is never split",
    )
    parser.add_argument("--progress", action="store_true", help="show a progress bar even when stderr is no terminal")
    add_json_flag(parser)


async def run_standalone(settings: Settings, args: argparse.Namespace) -> None:
    try:
        url = database_url_rule(args.to)
    except ValueError as exc:
        raise InvalidInput(f"--to: {exc}") from None
    if url is None:
        raise InvalidInput("--to: give the PostgreSQL URL to move into (postgresql://user:pass@host:port/db)")
    if args.batch_size < 1:
        raise InvalidInput(f"--batch-size must be 1 or more, got {args.batch_size}")
    started = time.perf_counter()
    report = await migrate(
        settings.db_path,
        settings.model_copy(update={"db_url": url}),
        batch_size=args.batch_size,
        progress=args.progress or sys.stderr.isatty(),
    )
    seconds = time.perf_counter() - started
    emit(args, {**asdict(report), "verified": report.verified, "total_s": round(seconds, 3)}, _text(report, seconds))
    if not report.verified:
        problems = [f"source: {p}" for p in report.source_problems] + [f"target: {p}" for p in report.target_problems]
        problems += report.differences
        more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        raise NotVerified(f"not verified: {'; '.join(problems[:SHOWN])}{more}")


def _text(report: MigrationReport, seconds: float) -> str:
    lines = [
        f"moved {report.source} to {report.target} for {', '.join(report.owners) or 'no owner'}"
        f" in {report.batches} batches ({seconds:.1f} s): added {counts_text(report.added) or 'nothing'}"
    ]
    if report.skipped:
        lines.append(f"already there (skipped): {counts_text(report.skipped)}")
    if report.vectors == "copied":
        lines.append(f"vectors: {report.vector_count} copied")
    elif report.vectors == "re-embedded":
        lines.append(f"vectors: {report.vector_count} re-embedded ({report.vector_note})")
    if report.vector_note and report.vectors != "re-embedded":
        lines.append(f"vectors: {report.vector_note}")
    if report.unembedded and report.vectors != "none":
        lines.append(f"{report.unembedded} memories have no vector yet; recall scores them directly until they do")
    lines.append(
        f"tokens: {report.tokens} ({report.tokens_added} added, {report.tokens_revoked} revocations carried over)"
    )
    checks = [("source", report.source_problems), ("target", report.target_problems)]
    lines.append("check: " + ", ".join(f"{side} {'clean' if not found else 'has errors'}" for side, found in checks))
    if report.verified:
        lines.append("verified: every record of every moved owner is the same in both stores")
    return "\n".join(lines)
