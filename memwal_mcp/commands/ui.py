"""`memwal-mcp ui`: the web dashboard for the person at this machine, on 127.0.0.1 only.

Over the configured database, with the curation worker running (undo restores bodies that need
vectors). Without any token it acts for the configured owner, as a loopback HTTP server does;
once a token exists it asks for one, as `serve --transport http` does.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import webbrowser

import anyio

from ..errors import InvalidInput
from ..service import MemoryService

log = logging.getLogger(__name__)

NAME = "ui"
HELP = "open the web dashboard on 127.0.0.1 (search, browse, a memory's history, undo, forget, activity)"
WORKER = True
RUNS_UNTIL_STOPPED = True  # Ctrl-C is how it ends: exit status 0
DEFAULT_PORT = 8766  # beside serve's 8765, so both run at once
HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        dest="ui_port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument("--no-browser", action="store_true", help="print the address instead of opening a browser")


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route

    from ..dashboard import build_dashboard
    from ..tokens import TokenRegistry

    port = args.ui_port
    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port must be from 1 to 65535 (0: any free port), got {port}")
    # Bound here, not by uvicorn: a port in use is then this message, not a traceback, and
    # --port 0 learns the port it got.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {HOST}:{port} ({exc.strerror or exc}); pass another --port") from None
    port = sock.getsockname()[1]
    registry = TokenRegistry(service.settings.auth, service.store)
    secured = await registry.secured()

    async def home(request: object) -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=303)

    dashboard = build_dashboard(service, registry, owner=service.settings.owner, grant=service.store.rate_grant)
    app = Starlette(routes=[Route("/", home), Mount("/ui", app=dashboard)])
    proxy = service.settings.server.proxy_options()
    server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning", access_log=False, **proxy))
    url = f"http://{HOST}:{port}/ui/"

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.05)
        who = "sign in with a token (memwal-mcp token create)" if secured else f"acting for {service.settings.owner!r}"
        sys.stderr.write(f"memwal dashboard at {url} ({who}; database {service.store.location}). Ctrl-C stops it.\n")
        sys.stderr.flush()
        if not args.no_browser:
            await anyio.to_thread.run_sync(webbrowser.open, url)

    with sock:
        async with anyio.create_task_group() as tg:
            tg.start_soon(announce)
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()
