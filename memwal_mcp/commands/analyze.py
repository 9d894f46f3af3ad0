from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InvalidInput
from ..schemas import AnalyzeOut, analyze_text
from ..service import MemoryService
from .output import add_json_flag, emit, filed_note

NAME = "analyze"
HELP = "extract the facts worth keeping from a conversation or passage with the configured LLM"
WORKER = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a UTF-8 text file, or - for standard input")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--wait-ms", type=int, default=10000, help="wait for curation (default 10000)")
    add_json_flag(parser)


def _read(name: str) -> str:
    """The text of a file or of stdin, without the trailing white space a file or `echo ... |` ends with:
    the same text as the tool would be given, and no newline kept in the analyze request (or, when
    extraction fails, in the memory the text becomes)."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8").rstrip()
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at {exc.start})") from None


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    outcome = await service.analyze(service.settings.owner, _read(args.file), args.namespace, args.wait_ms)
    out = AnalyzeOut.of(outcome)
    emit(args, out.model_dump(), analyze_text(out))


def interrupted(service: MemoryService, args: argparse.Namespace) -> str:
    return filed_note(service)
