from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..config import Settings

NAME = "serve"
HELP = "serve MCP over stdio (the default), SSE or streamable HTTP"

CLIENT_HINT = """\
memwal-mcp {version} speaks MCP over stdio and is waiting for a client on stdin.
To use it, add it to your MCP client's configuration, for example Claude Desktop's
claude_desktop_config.json:

  {{"mcpServers": {{"memwal": {{"command": "uvx", "args": ["--from", "/path/to/memwal-mcp", "memwal-mcp"]}}}}}}

Database: {db}
Try it from a shell instead:  memwal-mcp remember "User prefers dark roast coffee"
                              memwal-mcp recall coffee
Press Ctrl-C to stop.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--transport", choices=["stdio", "sse", "http"], default=argparse.SUPPRESS)
    parser.add_argument("--host", default=argparse.SUPPRESS, help="bind address for sse/http (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=argparse.SUPPRESS, help="port for sse/http (default 8765)")
    parser.add_argument("--no-worker", action="store_true", help="do not run the curation worker in this process")


def settings_overrides(args: argparse.Namespace) -> dict:
    server = {key: getattr(args, key) for key in ("transport", "host", "port") if key in args}
    if getattr(args, "no_worker", False):
        server["worker"] = False
    return {"server": server} if server else {}


async def serve(settings: Settings) -> None:
    from ..server import build_server
    from ..service import MemoryService

    transport = settings.server.transport
    if transport == "stdio":
        from ..stdio_guard import reserve_stdout_for_protocol

        reserve_stdout_for_protocol()
        if sys.stdin.isatty():
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
