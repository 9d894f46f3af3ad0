"""Logging to stderr (and optionally a file). stdout belongs to the protocol."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

_QUIET = ("httpx", "httpcore", "openai", "uvicorn.access", "mcp.server.lowlevel.server")


def setup_logging(level: str, log_file: Path | None = None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    for name in _QUIET:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    logging.captureWarnings(True)
