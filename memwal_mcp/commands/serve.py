from __future__ import annotations

import argparse
import ipaddress
import logging
import sys

from .. import __version__
from ..config import Settings
from ..errors import UnsafeConfiguration

log = logging.getLogger(__name__)

NAME = "serve"
HELP = "serve MCP over stdio (the default), SSE or streamable HTTP"
RUNS_UNTIL_STOPPED = True  # Ctrl-C is how it ends: exit status 0

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
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="allow sse/http on a non-loopback address without tokens (everyone acts as the configured owner)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="streamable HTTP without sessions, so a load balancer may send any request to any replica",
    )


def settings_overrides(args: argparse.Namespace) -> dict:
    server = {key: getattr(args, key) for key in ("transport", "host", "port") if key in args}
    if getattr(args, "no_worker", False):
        server["worker"] = False
    if getattr(args, "insecure_no_auth", False):
        server["insecure_no_auth"] = True
    if getattr(args, "stateless", False):
        server["stateless"] = True
    return {"server": server} if server else {}


async def serve(settings: Settings) -> None:
    from ..server import build_server
    from ..service import MemoryService
    from ..tokens import TokenRegistry

    transport = settings.server.transport
    if transport == "stdio":
        from ..stdio_guard import reserve_stdout_for_protocol

        reserve_stdout_for_protocol()
        if sys.stdin.isatty():
            sys.stderr.write(CLIENT_HINT.format(version=__version__, db=settings.db_path))
    service = MemoryService(settings)
    async with service.running(worker=settings.server.worker):
        if transport == "stdio":
            await build_server(service, settings.owner).run_stdio_async()
            return
        from ..http_app import serve_http

        host, port = settings.server.host, settings.server.port
        registry = TokenRegistry(settings.auth, service.store)
        if not await registry.secured():
            if not _is_loopback(host) and not settings.server.insecure_no_auth:
                raise UnsafeConfiguration(
                    f"refusing to serve {transport} on {host} without bearer tokens: anyone who can reach it could "
                    "read and change the memories. Create one with `memwal-mcp token create --owner NAME`, "
                    "bind to 127.0.0.1, or pass --insecure-no-auth"
                )
            log.warning(
                "serving %s on %s:%d without authentication; every caller acts as %r until a token "
                "is created (`memwal-mcp token create`), from then on every request needs one",
                transport,
                host,
                port,
                settings.owner,
            )
        from ..dashboard import build_dashboard

        dashboard = build_dashboard(
            service,
            registry,
            owner=settings.owner,
            any_host=settings.server.insecure_no_auth,
            grant=service.store.rate_grant,  # sign-in limits shared by the replicas of a shared store
        )
        await serve_http(
            build_server(service, settings.owner),
            settings,
            registry,
            dashboard,
            health=service.healthy,
            grant=service.store.rate_grant,  # one limit per token across the replicas of a shared store
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
