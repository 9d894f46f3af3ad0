from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from .. import __version__
from ..config import Settings
from ..doctor import Check, DoctorReport, run_doctor
from ..wording import counted
from .output import EXIT_FAILED, add_json_flag, emit

NAME = "doctor"
HELP = "check this installation (Python, SQLite, model, database, LLM) and print the MCP client config"
WORKER = False

_MARKS = {"ok": ("✓", "ok"), "fail": ("✗", "FAIL"), "warn": ("!", "warn"), "skip": ("-", "skip")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_flag(parser)


def _mark(status: str) -> str:
    symbol, word = _MARKS[status]
    try:
        symbol.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):  # a console that cannot show ✓ (cp1252)
        return word
    return symbol


def _check_lines(check: Check, width: int) -> list[str]:
    lines = [f"{_mark(check.status)} {check.name:<{width}} {check.detail}"]
    if check.fix and check.status != "ok":
        lines.append(f"  {'':<{width}} fix: {check.fix}")
    return lines


def report_text(report: DoctorReport) -> str:
    width = max(len(check.name) for check in report.checks)
    lines = [f"memwal-mcp {__version__} doctor", ""]
    for check in report.checks:
        lines += _check_lines(check, width)
    lines += ["", "Add memwal-mcp to an MCP client by merging this JSON into its configuration:"]
    for snippet in report.clients:
        lines += ["", f"{snippet.client}: {snippet.file}", json.dumps(snippet.config, indent=2)]
    counts = {status: sum(c.status == status for c in report.checks) for status in _MARKS}
    verdict = "some checks FAILED; see the fixes above" if report.failed else "ready"
    lines += [
        "",
        f"doctor: {counts['ok']} ok, {counted(counts['warn'], 'warning')}, {counts['fail']} failed,"
        f" {counts['skip']} skipped: {verdict}",
    ]
    return "\n".join(lines)


async def diagnose(settings: Settings, args: argparse.Namespace, created_now: bool = False) -> None:
    report = await run_doctor(settings, created_now=created_now)
    data = {
        "ok": not report.failed,
        "checks": [asdict(check) for check in report.checks],
        "clients": [asdict(snippet) for snippet in report.clients],
    }
    emit(args, data, report_text(report))
    if report.failed:
        raise SystemExit(EXIT_FAILED)


async def run_standalone(settings: Settings, args: argparse.Namespace) -> None:
    """Create and migrate the database as a first start would, but diagnose even when that fails."""
    from ..store import open_store

    path = settings.db_path.expanduser()
    existed = path.exists()
    store = open_store(settings)
    try:
        await store.open()
        await store.close()
    except Exception:  # the database check below says what is wrong
        pass
    await diagnose(settings, args, created_now=not existed and path.exists())
