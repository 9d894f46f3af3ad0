"""How commands print: readable text for people, JSON with --json."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..service import MemoryService

# Exit statuses, the same for every command (README, "Exit status"); 0 is done.
EXIT_FAILED = 1  # the command could not do it: no such record, the store or model unusable, a check found errors
EXIT_USAGE = 2  # the command line was refused: a bad option or value, or a request refused as given; nothing changed
EXIT_INTERRUPTED = 130  # Ctrl-C stopped a command before it finished (128 + SIGINT)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if getattr(args, "json", False) else text)


def filed_note(service: MemoryService) -> str:
    """What an interrupted remember or analyze leaves (cli prints it): its facts filed as jobs,
    which a later run curates, or nothing. A Ctrl-C during the filing transaction cannot know
    whether the commit landed."""
    if service.filing:
        return (
            "it stopped while filing: the fact may be stored (`memwal-mcp recall` finds it); "
            "remembering it again is harmless, a repeat is folded"
        )
    if not service.filed:
        return "nothing was stored"
    ids = " ".join(service.filed)
    return (
        f"filed as {'job' if len(service.filed) == 1 else 'jobs'} {ids}, which any later memwal-mcp curates if it "
        f"is not curated yet (`memwal-mcp status {ids}` tells)"
    )
