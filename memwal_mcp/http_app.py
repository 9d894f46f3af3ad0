"""The front door of the sse and http transports: who is calling, and how often.

One ASGI layer in front of the SDK's Starlette app, so every request passes the same checks before the
SDK sees it, `initialize` included:

- Authentication follows the tokens that exist now (`TokenRegistry.secured`), not those that existed at
  start-up: with none, requests act for the configured owner; once one exists, a request without a valid
  token gets 401. A token that is sent is always checked, so a wrong one never passes as the owner.
- Every request but DELETE (ending a session only frees the server) spends one of its token's rate
  limit. Over it, the answer is HTTP 429 with Retry-After and a JSON-RPC error saying when to retry.
  Over SSE a call's reply travels on the event stream, not on its POST, so the error is sent there too.
"""

from __future__ import annotations

import json
import math
from contextvars import ContextVar
from typing import Any

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .config import Settings
from .ratelimit import RateLimiter
from .tokens import TokenRegistry

RATE_LIMITED = -32029
"""JSON-RPC error code of a request refused by the rate limit (in the range left to implementations)."""

# Set while an SSE message refused by the rate limit goes on to its session, so the session answers
# the request with this error on the event stream instead of running it.
_refused: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar("memwal_refused", default=None)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _error(status: int, code: int, message: str, *, data: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> Response:
    """A JSON-RPC error with no id (the request is refused before its body is read), as the SDK's own 404/503."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def _unauthorized(message: str, *, token_sent: bool) -> Response:
    # RFC 6750: a request that sent no credentials gets the challenge without an error code.
    challenge = 'Bearer realm="memwal"'
    if token_sent:
        challenge += f', error="invalid_token", error_description="{message}"'
    return _error(401, INVALID_REQUEST, message, headers={"WWW-Authenticate": challenge})


class HttpGate:
    """ASGI middleware around the SDK's sse or streamable-HTTP app (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, transport: str, registry: TokenRegistry, settings: Settings) -> None:
        self._app = app
        self._sse = transport == "sse"
        self._registry = registry
        self._limiter = RateLimiter(settings.auth.rate_per_minute, settings.auth.burst)
        self._limits = f"{settings.auth.rate_per_minute} per minute, {settings.auth.burst} at once"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        user = await self._authenticate(scope)
        if isinstance(user, Response):
            await user(scope, receive, send)
            return
        caller = ""
        wait = 0.0
        if user is not None:
            scope["user"] = user  # the SDK binds each session to the credential that opened it
            caller = user.access_token.token
            if scope["method"] != "DELETE":
                wait = self._limiter.take(caller)
        sse_message = self._sse and scope["method"] == "POST"
        if wait > 0 and not sse_message:
            await self._rate_limited(wait)(scope, receive, send)
            return
        context = auth_context_var.set(user) if user is not None else None
        try:
            if sse_message and wait > 0:
                await self._sse_refused(scope, receive, send, wait)
            else:
                await self._app(scope, receive, send)
        finally:
            if context is not None:
                auth_context_var.reset(context)

    async def _authenticate(self, scope: Scope) -> AuthenticatedUser | Response | None:
        """The token's user; None to act for the configured owner (no token exists); or the 401 to send."""
        header = _header(scope, b"authorization")
        if header is None:
            if await self._registry.secured():
                return _unauthorized("this server needs a bearer token: send 'Authorization: Bearer <token>'",
                                     token_sent=False)
            return None
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _unauthorized("the Authorization header must be 'Bearer <token>'", token_sent=True)
        principal = await self._registry.resolve(token.strip())
        if principal is None or principal.token_hash is None:
            return _unauthorized("the bearer token is not valid (unknown or revoked)", token_sent=True)
        return AuthenticatedUser(
            AccessToken(
                token=principal.token_hash,  # the hash: the token itself is not kept anywhere
                client_id=principal.token_hash,  # so a session is bound to one token, not only to its owner
                scopes=sorted(principal.scopes),
                subject=principal.owner,
            )
        )

    def _refusal(self, wait: float) -> tuple[int, str, dict[str, Any]]:
        seconds = max(1, math.ceil(wait))
        message = f"rate limit exceeded for this token ({self._limits}): retry after {seconds} s"
        return seconds, message, {"retry_after_s": seconds}

    def _rate_limited(self, wait: float) -> Response:
        seconds, message, data = self._refusal(wait)
        return _error(429, RATE_LIMITED, message, data=data, headers={"Retry-After": str(seconds)})

    async def _sse_refused(self, scope: Scope, receive: Receive, send: Send, wait: float) -> None:
        # The message still goes to its session, marked refused: the session answers it with the error on the
        # event stream (where the client waits for it) instead of running it; the POST itself answers 429.
        _, message, data = self._refusal(wait)
        limited = self._rate_limited(wait)
        replaced = False

        async def as_429(reply: Message) -> None:
            nonlocal replaced
            if reply["type"] == "http.response.start" and reply["status"] == 202:
                replaced = True
                await limited(scope, receive, send)
            elif not replaced:
                await send(reply)

        token = _refused.set((message, data))
        try:
            await self._app(scope, receive, as_429)
        finally:
            _refused.reset(token)


async def _answer_refused(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware (SSE): a message the gate refused is answered with its error, not run."""
    refused = _refused.get()
    if refused is None:
        return await call_next(ctx)
    if ctx.request_id is None:
        return None  # a notification: dropped, as its POST's 429 said
    message, data = refused
    raise MCPError(RATE_LIMITED, message, data)


async def serve_http(server: MCPServer, settings: Settings, registry: TokenRegistry) -> None:
    """Serve `server` over sse or streamable HTTP behind the gate, until the process is stopped."""
    import uvicorn

    host, port = settings.server.host, settings.server.port
    app: ASGIApp
    if settings.server.transport == "sse":
        server.middleware.append(_answer_refused)
        app = server.sse_app(host=host)
    else:
        app = server.streamable_http_app(host=host)
    gate = HttpGate(app, transport=settings.server.transport, registry=registry, settings=settings)
    config = uvicorn.Config(gate, host=host, port=port, log_level=server.settings.log_level.lower())
    await uvicorn.Server(config).serve()
