"""`memwal-mcp`: serve MCP (the default), or remember / recall / status / stats from a shell."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import anyio

from . import __version__
from .config import Settings, load_settings
from .errors import InvalidInput, MemwalError

T = TypeVar("T")

CLIENT_HINT = """\
memwal-mcp {version} speaks MCP over stdio and is waiting for a client on stdin.
To use it, add it to your MCP client's configuration, for example Claude Desktop's
claude_desktop_config.json:

  {{"mcpServers": {{"memwal": {{"command": "uvx", "args": ["memwal-mcp"]}}}}}}

Database: {db}
Try it from a shell instead:  memwal-mcp remember "User prefers dark roast coffee"
                              memwal-mcp recall coffee
Press Ctrl-C to stop.
"""


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="TOML config file")
    common.add_argument("--db", type=Path, default=argparse.SUPPRESS, help="SQLite database file (MEMWAL_DB_PATH)")
    common.add_argument("--owner", default=argparse.SUPPRESS, help="whose memory (MEMWAL_OWNER, default 'local')")
    common.add_argument(
        "--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], default=argparse.SUPPRESS, help="stderr log level"
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="memwal-mcp",
        description="Long-term memory for AI agents over MCP. With no command, serves MCP over stdio.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"memwal-mcp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", parents=[common], help="serve MCP (stdio, sse or streamable http)")
    serve.add_argument("--transport", choices=["stdio", "sse", "http"], default=argparse.SUPPRESS)
    serve.add_argument("--host", default=argparse.SUPPRESS, help="bind address for sse/http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=argparse.SUPPRESS, help="port for sse/http (default 8765)")
    serve.add_argument("--no-worker", action="store_true", help="do not run the curation worker in this process")

    remember = commands.add_parser("remember", parents=[common], help="remember a fact")
    remember.add_argument("text")
    remember.add_argument("--namespace", default="default")
    remember.add_argument("--key", dest="idempotency_key", default=None, help="idempotency key")
    remember.add_argument("--wait-ms", type=int, default=10000, help="wait for curation (default 10000)")
    remember.add_argument("--json", action="store_true", help="print JSON")

    recall = commands.add_parser("recall", parents=[common], help="recall facts relevant to a query")
    recall.add_argument("query")
    recall.add_argument("--limit", type=int, default=None)
    recall.add_argument("--namespace", default="default")
    recall.add_argument("--min-score", type=float, default=None)
    recall.add_argument("--json", action="store_true", help="print JSON")

    status = commands.add_parser("status", parents=[common], help="show remember jobs")
    status.add_argument("job_ids", nargs="+")
    status.add_argument("--json", action="store_true", help="print JSON")

    history = commands.add_parser("history", parents=[common], help="revisions and jobs of a memory")
    history.add_argument("memory_id")
    history.add_argument("--json", action="store_true", help="print JSON")

    stats = commands.add_parser("stats", parents=[common], help="queue state and curation counters")
    stats.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if "db" in args:
        overrides["db_path"] = args.db
    if "owner" in args:
        overrides["owner"] = args.owner
    if "log_level" in args:
        overrides["log_level"] = args.log_level
    server = {key: getattr(args, key) for key in ("transport", "host", "port") if key in args}
    if getattr(args, "no_worker", False):
        server["worker"] = False
    if server:
        overrides["server"] = server
    return load_settings(getattr(args, "config", None), **overrides)


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = args.command or "serve"
    try:
        settings = _settings(args)
    except MemwalError as exc:
        parser.exit(2, f"memwal-mcp: error: {exc}\n")
    except Exception as exc:  # pydantic validation of env/TOML values
        parser.exit(2, f"memwal-mcp: configuration error: {exc}\n")

    from .logs import setup_logging

    quiet = command != "serve" and "log_level" not in args
    setup_logging("WARNING" if quiet else settings.log_level, settings.log_file)
    try:
        if command == "serve":
            anyio.run(_serve, settings)
        else:
            anyio.run(_one_shot, settings, command, args)
    except KeyboardInterrupt:
        pass
    except InvalidInput as exc:
        parser.exit(2, f"memwal-mcp: error: {exc}\n")
    except MemwalError as exc:
        parser.exit(1, f"memwal-mcp: error: {exc}\n")


async def _serve(settings: Settings) -> None:
    from .server import build_server
    from .service import MemoryService

    transport = settings.server.transport
    if transport == "stdio" and sys.stdin.isatty():
        sys.stderr.write(CLIENT_HINT.format(version=__version__, db=settings.db_path))
    service = MemoryService(settings)
    async with service.running(worker=settings.server.worker):
        server = build_server(service, settings.owner)
        if transport == "stdio":
            await server.run_stdio_async()
        elif transport == "sse":
            await server.run_sse_async(host=settings.server.host, port=settings.server.port)
        else:
            await server.run_streamable_http_async(host=settings.server.host, port=settings.server.port)


async def _one_shot(settings: Settings, command: str, args: argparse.Namespace) -> None:
    from .recall.format import recall_text
    from .server import HistoryOut, JobOut, RecallOut, history_text
    from .service import MemoryService

    service = MemoryService(settings)
    async with service.running(worker=command in ("remember", "recall")):
        owner = settings.owner
        if command == "remember":
            outcome = await service.remember(owner, args.text, args.namespace, args.idempotency_key, args.wait_ms)
            job = JobOut.of(outcome.job)
            _print(args.json, job.model_dump(), f"{job.job_id}: {job.status}"
                   + (f" ({job.decision}) -> memory {job.memory_id}" if job.status == "done" else ""))
        elif command == "recall":
            result = await service.recall(owner, args.query, args.limit, args.namespace, args.min_score)
            _print(args.json, RecallOut.of(result).model_dump(), recall_text(result))
        elif command == "status":
            jobs = [JobOut.of(job) for job in await service.status(owner, args.job_ids)]
            _print(args.json, [j.model_dump() for j in jobs],
                   "\n".join(f"{j.job_id}: {j.status} {j.decision or ''} {j.memory_id or j.error or ''}".rstrip()
                             for j in jobs))
        elif command == "history":
            out = HistoryOut.of(await service.history(owner, args.memory_id))
            _print(args.json, out.model_dump(), history_text(out))
        elif command == "stats":
            stats = await service.stats()
            lines = [f"database: {stats.db_path}"]
            model = f"{stats.vector_model[0]} ({stats.vector_model[1]} dims)" if stats.vector_model else "none yet"
            lines.append(f"vectors: {model}")
            lines.append("queue: " + (", ".join(f"{k}={v}" for k, v in sorted(stats.queue.items())) or "empty"))
            lines.append("curation markers:")
            lines += [f"  {marker}: {count}" for marker, count in stats.counters.items()] or ["  (none yet)"]
            _print(args.json, asdict(stats), "\n".join(lines))


def _print(as_json: bool, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text)
