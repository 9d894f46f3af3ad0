"""How commands print: readable text for people, JSON with --json."""

from __future__ import annotations

import argparse
import json
from typing import Any

# Exit statuses, the same for every command (README, "Exit status"); 0 is done.
EXIT_FAILED = 1  # the command could not do it: no such record, the store or model unusable, a check found errors
EXIT_USAGE = 2  # the command line was refused: a bad option or value, or a request refused as given; nothing changed
EXIT_INTERRUPTED = 130  # Ctrl-C stopped a command before it finished (128 + SIGINT)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if getattr(args, "json", False) else text)
