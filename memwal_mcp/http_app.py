"""The front door of the sse and http transports: who is calling, how often, and how many sessions they hold.

One ASGI layer in front of the SDK's Starlette app, so every request passes the same checks before the
SDK sees it, `initialize` included:

- Authentication follows the tokens that exist now (`TokenRegistry.secured`), not those that existed at
  start-up: with none, requests act for the configured owner; once one exists, a request without a valid
  token gets 401. A token that is sent is always checked, so a wrong one never passes as the owner.
- Every request but DELETE (ending a session only frees the server) spends one of its token's rate
  limit. Over it, the answer is HTTP 429 with Retry-After and a JSON-RPC error saying when to retry.
  Over SSE a call's reply travels on the event stream, not on its POST, so the error is sent there too.
- A token (the whole server, without tokens) keeps at most `max_sessions_per_token` sessions: opening
  one more ends its least recently used, whose id then answers 404. A session with no request for
  `session_idle_s` is closed. `max_sessions` bounds all callers together (503 beyond it).
- `/healthz` answers a load balancer without a token: 200 when the store answers a read, 503 when it
  does not (within HEALTH_TIMEOUT_S). It says nothing about the memories, so it needs no credential.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import anyio
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .config import Settings
from .errors import StoreUnavailable
from .ratelimit import Grant, SharedRateLimiter
from .request_size import max_request_bytes
from .stdio_replies import Reply, encode, for_sdk, is_text, parse_line, unencodable_reply
from .tokens import TokenRegistry
from .validation import show

log = logging.getLogger(__name__)

RATE_LIMITED = -32029
"""JSON-RPC error code of a request refused by the rate limit (in the range left to implementations)."""

# Set while an SSE message refused by the rate limit goes on to its session, so the session answers
# the request with this error on the event stream instead of running it.
_refused: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar("memwal_refused", default=None)

# How the SDK's SSE transport tells a client where to post: the first event of the stream.
_SSE_SESSION = re.compile(rb"session_id=([0-9a-f]{32})")

# Set while a message whose body had to be re-serialised for the SDK goes on to its session: (id, params as
# sent), put back by `_restore_params` before it is served.
_sent_params: ContextVar[tuple[Any, dict[str, Any]] | None] = ContextVar("memwal_sent_params", default=None)


@dataclass(frozen=True)
class _Screened:
    """What the gate decided for a POSTed message (stdio_replies decides, as for a stdio line)."""

    original: Receive  # the body as it came
    reply: Reply | None = None  # the error to answer instead of serving it
    receive: Receive | None = None  # the body to pass on; None: nothing to serve (answer 202)
    params: tuple[Any, dict[str, Any]] | None = None


async def _screen(receive: Receive, limit: int) -> _Screened:
    """Read a POST's body and decide, as for a stdio line: answer it, pass it on (re-serialised when the SDK's
    parser would refuse it), or drop it. A body over `limit` is passed on as it came, for the SDK's 413."""
    chunks: list[Message] = []
    size = 0
    while True:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            return _Screened(_replay(chunks, receive), receive=_replay(chunks, receive))
        size += len(message.get("body", b""))
        if size > limit:
            return _Screened(_replay(chunks, receive), receive=_replay(chunks, receive))
        if not message.get("more_body", False):
            break
    original = _replay(chunks, receive)
    body = b"".join(bytes(chunk.get("body", b"")) for chunk in chunks)
    if not body.strip():
        return _Screened(original, receive=_replay(chunks, receive))  # the SDK says what an empty body is
    parsed = parse_line(body)
    if isinstance(parsed, Reply):
        return _Screened(original, reply=parsed)
    if parsed is None:
        return _Screened(original)
    sdk_body, sent = for_sdk(parsed)
    if sent is None:
        return _Screened(original, receive=_replay(chunks, receive))
    request_id = getattr(parsed, "id", None)
    return _Screened(
        original,
        params=(request_id, sent),
        receive=_replay([{"type": "http.request", "body": sdk_body, "more_body": False}], receive),
    )


def _replay(chunks: list[Message], receive: Receive) -> Receive:
    """A receive that gives `chunks` again, then whatever follows (the disconnect)."""
    pending = list(chunks)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _reply_response(reply: Reply) -> Response:
    """The HTTP answer to a message refused before the SDK saw it: its JSON-RPC error, as a stdio line gets it."""
    return Response(encode(reply.error) or b"", status_code=400, media_type="application/json")


def _sse_event(reply: Reply) -> bytes:
    return b"event: message\r\ndata: " + (encode(reply.error) or b"").rstrip(b"\n") + b"\r\n\r\n"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _error(
    status: int, code: int, message: str, *, data: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> Response:
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


@dataclass(eq=False)
class _Session:
    end: Callable[[], Awaitable[None]]
    used: float = field(default_factory=time.monotonic)


class SessionBook:
    """The sessions each caller (a token's hash, or "" without tokens) holds, least recently used first.

    For streamable HTTP the SDK may end a session without telling (idle timeout, crash); its entry stays
    until it is evicted or its id answers 404. A stale entry only uses up room under the cap, so the live
    sessions never exceed it; ending a stale one (the oldest first) costs a DELETE answered 404.
    """

    def __init__(self, per_caller: int) -> None:
        self._per_caller = per_caller
        self._by_caller: dict[str, OrderedDict[str, _Session]] = {}

    def add(self, caller: str, session_id: str, session: _Session) -> list[_Session]:
        """Record a new session; returns those it pushed over the caller's cap, already forgotten."""
        held = self._by_caller.setdefault(caller, OrderedDict())
        held[session_id] = session
        evicted = []
        while len(held) > self._per_caller:
            evicted.append(held.popitem(last=False)[1])
        if evicted:
            log.info(
                "%s holds %d sessions, its cap: ended the least recently used to open %s",
                f"token {caller[:19]}" if caller else "the server (no tokens)",
                self._per_caller,
                session_id,
            )
        return evicted

    def touch(self, caller: str, session_id: str) -> None:
        held = self._by_caller.get(caller)
        session = held.get(session_id) if held else None
        if held is not None and session is not None:
            session.used = time.monotonic()
            held.move_to_end(session_id)

    def forget(self, caller: str, session_id: str) -> None:
        held = self._by_caller.get(caller)
        if held is not None:
            held.pop(session_id, None)
            if not held:
                del self._by_caller[caller]

    def total(self) -> int:
        return sum(len(held) for held in self._by_caller.values())


# Retry-After of a request refused because the store did not answer: about a health check's interval.
STORE_RETRY_S = 5

HEALTH_PATH = "/healthz"
HEALTH_TIMEOUT_S = 5.0  # longer than a healthy store's slowest read; shorter than a balancer's usual 10 s check


async def _answer_health(
    health: Callable[[float], Awaitable[None]], scope: Scope, receive: Receive, send: Send
) -> None:
    if scope["method"] not in ("GET", "HEAD"):
        response = Response(status_code=405, headers={"Allow": "GET, HEAD"})
    else:
        try:
            await health(HEALTH_TIMEOUT_S)
        except Exception as exc:  # whatever keeps the store from answering makes this replica unfit to serve
            log.warning("health check failed: %s", " ".join(str(exc).split()) or type(exc).__name__)
            body, status = {"status": "unavailable", "reason": "the store did not answer a read"}, 503
        else:
            body, status = {"status": "ok"}, 200
        response = Response(json.dumps(body), status_code=status, media_type="application/json")
    response.headers["Cache-Control"] = "no-store"
    await response(scope, receive, send)


async def _no_shared_buckets(key: str, want: int, rate: float, burst: float, now: float) -> None:
    return None  # without a store that keeps buckets, limits are this process's


class HttpGate:
    """ASGI middleware around the SDK's sse or streamable-HTTP app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        transport: str,
        registry: TokenRegistry,
        settings: Settings,
        health: Callable[[float], Awaitable[None]] | None = None,
        grant: Grant | None = None,
    ) -> None:
        self._app = app
        self._health = health
        self._sse = transport == "sse"
        self._stateless = settings.server.stateless
        self._registry = registry
        self._limiter = SharedRateLimiter(
            grant or _no_shared_buckets, settings.auth.rate_per_minute, settings.auth.burst
        )
        self._limits = f"{settings.auth.rate_per_minute} per minute, {settings.auth.burst} at once"
        self._sessions = SessionBook(settings.auth.max_sessions_per_token)
        self._idle_s = settings.server.session_idle_s
        self._max_sessions = settings.server.max_sessions
        self._max_body = max_request_bytes(settings.limits.max_text_bytes)
        # Each open SSE stream by session id: its caller, and how to put an event on it.
        self._sse_streams: dict[str, tuple[str, Callable[[bytes], Awaitable[None]]]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._health is not None and scope.get("path") == HEALTH_PATH:
            await _answer_health(self._health, scope, receive, send)
            return
        if scope["type"] != "http" or is_dashboard(scope):
            # The dashboard at /ui signs browsers in with a session cookie and checks them itself.
            await self._app(scope, receive, send)
            return
        try:
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
                    wait = await self._limiter.take(caller)
        except StoreUnavailable as exc:  # the tokens or the shared buckets could not be read
            log.warning("refused a request: %s", exc)
            await _error(503, INTERNAL_ERROR, str(exc), headers={"Retry-After": str(STORE_RETRY_S)})(
                scope, receive, send
            )
            return
        refused = self._refused_as_sent(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        sse_message = self._sse and scope["method"] == "POST"
        if wait > 0 and not sse_message:
            await self._rate_limited(wait)(scope, receive, send)
            return
        context = auth_context_var.set(user) if user is not None else None
        try:
            if sse_message:
                await self._sse_message(caller, scope, receive, send, wait)
            elif self._sse and scope["method"] == "GET":
                await self._sse_stream(caller, scope, receive, send)
            elif self._sse:
                await self._app(scope, receive, send)
            else:
                await self._streamable(caller, scope, receive, send)
        finally:
            if context is not None:
                auth_context_var.reset(context)

    async def _authenticate(self, scope: Scope) -> AuthenticatedUser | Response | None:
        """The token's user; None to act for the configured owner (no token exists); or the 401 to send."""
        header = _header(scope, b"authorization")
        if header is None:
            if await self._registry.secured():
                return _unauthorized(
                    "this server needs a bearer token: send 'Authorization: Bearer <token>'", token_sent=False
                )
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

    def _refused_as_sent(self, scope: Scope) -> Response | None:
        """What the SDK would refuse in plain text or hold open, refused here as JSON-RPC asks: a
        streamable-HTTP POST that is not JSON, and in stateless mode a GET, which would open a server-to-client
        stream that no request of this mode can use (it answered 200 and held the connection)."""
        method = scope["method"]
        if method == "POST" and not self._sse:
            kind = _header(scope, b"content-type")
            if kind is None or not kind.lower().startswith("application/json"):
                sent = f"got {show(kind)}" if kind is not None else "none was sent"
                return _error(415, INVALID_REQUEST, f"Content-Type must be application/json; {sent}")
        elif method == "GET" and self._stateless:
            return _error(
                405,
                INVALID_REQUEST,
                "this server is stateless: it has no server-to-client stream to GET; POST each request",
                headers={"Allow": "POST"},
            )
        return None

    def _refusal(self, wait: float) -> tuple[int, str, dict[str, Any]]:
        seconds = max(1, math.ceil(wait))
        message = f"rate limit exceeded for this token ({self._limits}): retry after {seconds} s"
        return seconds, message, {"retry_after_s": seconds}

    def _rate_limited(self, wait: float) -> Response:
        seconds, message, data = self._refusal(wait)
        return _error(429, RATE_LIMITED, message, data=data, headers={"Retry-After": str(seconds)})

    # --- streamable HTTP -----------------------------------------------------------------

    async def _streamable(self, caller: str, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _header(scope, b"mcp-session-id")
        status: int | None = None
        opened: str | None = None

        async def watch(message: Message) -> None:
            nonlocal status, opened
            if message["type"] == "http.response.start":
                status = message["status"]
                if session_id is None and status < 400:
                    opened = next(
                        (
                            bytes(v).decode("latin-1")
                            for k, v in message.get("headers", [])
                            if k.lower() == b"mcp-session-id"
                        ),
                        None,
                    )
            await send(message)

        if session_id is not None:
            self._sessions.touch(caller, session_id)
        if scope["method"] == "POST":
            screened = await _screen(receive, self._max_body)
            if screened.reply is not None:
                await _reply_response(screened.reply)(scope, receive, send)
                return
            if screened.receive is None:
                await Response(status_code=202)(scope, receive, send)
                return
            receive = screened.receive
            sent = _sent_params.set(screened.params)
            try:
                await self._app(scope, receive, watch)
            finally:
                _sent_params.reset(sent)
        else:
            await self._app(scope, receive, watch)
        if session_id is not None and (status == 404 or (scope["method"] == "DELETE" and status == 200)):
            self._sessions.forget(caller, session_id)
        if opened is not None:
            for evicted in self._sessions.add(caller, opened, _Session(self._deleter(scope, opened))):
                await evicted.end()

    def _deleter(self, scope: Scope, session_id: str) -> Callable[[], Awaitable[None]]:
        """Ends a session the way its client would, with a DELETE through the SDK's app (no private API)."""
        kept = (
            "type",
            "asgi",
            "http_version",
            "scheme",
            "server",
            "client",
            "root_path",
            "path",
            "raw_path",
            "state",
            "user",
        )
        headers = [(k, v) for k, v in scope["headers"] if k in (b"host", b"origin")]
        delete: Scope = {key: scope[key] for key in kept if key in scope}
        delete.update(method="DELETE", query_string=b"", headers=[*headers, (b"mcp-session-id", session_id.encode())])

        async def end() -> None:
            received = False

            async def receive() -> Message:
                nonlocal received
                if received:
                    await anyio.sleep_forever()
                received = True
                return {"type": "http.request", "body": b"", "more_body": False}

            async def discard(message: Message) -> None:
                pass

            await self._app(dict(delete), receive, discard)

        return end

    # --- SSE -------------------------------------------------------------------------------

    async def _sse_message(self, caller: str, scope: Scope, receive: Receive, send: Send, wait: float) -> None:
        session_id = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1")).get("session_id", [None])[0]
        if session_id is not None:
            self._sessions.touch(caller, session_id)
        screened = await _screen(receive, self._max_body)
        stream = self._sse_streams.get(session_id or "")
        if stream is None or stream[0] != caller:  # no stream of this caller's to answer on: the SDK says why
            receive = screened.original
        elif screened.reply is not None:
            # Answered where the client waits for replies, the event stream; the POST says it too.
            with contextlib.suppress(Exception):  # the stream may be gone already
                await stream[1](_sse_event(screened.reply))
            await _reply_response(screened.reply)(scope, receive, send)
            return
        elif screened.receive is None:
            await Response("Accepted", status_code=202)(scope, receive, send)
            return
        else:
            receive = screened.receive
        sent = _sent_params.set(screened.params)
        try:
            await self._sse_pass_on(scope, receive, send, wait)
        finally:
            _sent_params.reset(sent)

    async def _sse_pass_on(self, scope: Scope, receive: Receive, send: Send, wait: float) -> None:
        if wait <= 0:
            await self._app(scope, receive, send)
            return
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

    async def _sse_stream(self, caller: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self._sessions.total() >= self._max_sessions:
            await _error(503, INTERNAL_ERROR, f"too many open sessions ({self._max_sessions}); try again later")(
                scope, receive, send
            )
            return
        cancel = anyio.CancelScope()

        async def end() -> None:
            cancel.cancel()

        session = _Session(end)
        session_id: str | None = None
        started = finished = False

        async def push(event: bytes) -> None:
            if not finished:
                await send({"type": "http.response.body", "body": event, "more_body": True})

        async def watch(message: Message) -> None:
            nonlocal session_id, started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body":
                finished = not message.get("more_body", False)
                found = _SSE_SESSION.search(message.get("body", b"")) if session_id is None else None
                if found is not None:
                    session_id = found.group(1).decode("ascii")
                    self._sse_streams[session_id] = (caller, push)
                    for evicted in self._sessions.add(caller, session_id, session):
                        await evicted.end()
            await send(message)

        try:
            with cancel:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._close_when_idle, session, cancel)
                    await self._app(scope, receive, watch)
                    tg.cancel_scope.cancel()
        finally:
            if session_id is not None:
                self._sessions.forget(caller, session_id)
                self._sse_streams.pop(session_id, None)
        if cancel.cancelled_caught and started and not finished:
            with contextlib.suppress(Exception):  # the client may be gone already
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _close_when_idle(self, session: _Session, cancel: anyio.CancelScope) -> None:
        while (left := session.used + self._idle_s - time.monotonic()) > 0:
            await anyio.sleep(left)
        cancel.cancel()


async def _answer_refused(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware (SSE): a message the gate refused is answered with its error, not run."""
    refused = _refused.get()
    if refused is None:
        return await call_next(ctx)
    if ctx.request_id is None:
        return None  # a notification: dropped, as its POST's 429 said
    message, data = refused
    raise MCPError(RATE_LIMITED, message, data)


async def _restore_params(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: a request whose body the gate re-serialised (stdio_replies.for_sdk) is served with
    its params as sent; a reply that would repeat a lone surrogate from them is refused as over stdio."""
    sent = _sent_params.get()
    if sent is None or ctx.request_id is None or ctx.request_id != sent[0]:
        return await call_next(ctx)
    try:
        result = await call_next(dataclasses.replace(ctx, params=sent[1]))
    except MCPError as exc:
        if is_text(exc.error.model_dump()):
            raise
        raise MCPError.from_error_data(unencodable_reply()) from exc
    if not is_text(result):
        raise MCPError.from_error_data(unencodable_reply())
    return result


DASHBOARD_PATH = "/ui"


def is_dashboard(scope: Scope) -> bool:
    path = str(scope.get("path", ""))
    return path == DASHBOARD_PATH or path.startswith(DASHBOARD_PATH + "/")


async def serve_http(
    server: MCPServer,
    settings: Settings,
    registry: TokenRegistry,
    dashboard: ASGIApp | None = None,
    health: Callable[[float], Awaitable[None]] | None = None,
    grant: Grant | None = None,
) -> None:
    """Serve `server` over sse or streamable HTTP behind the gate, until the process is stopped; with
    `dashboard`, that app at /ui beside it (it authenticates its own requests); with `health`, /healthz."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    host, port = settings.server.host, settings.server.port
    max_body = max_request_bytes(settings.limits.max_text_bytes)
    app: Starlette
    server.middleware.append(_restore_params)
    if settings.server.transport == "sse":
        server.middleware.append(_answer_refused)
        app = server.sse_app(host=host, max_request_body_size=max_body)
    else:
        app = server.streamable_http_app(
            host=host,
            stateless_http=settings.server.stateless,
            session_idle_timeout=settings.server.session_idle_s,
            max_sessions=settings.server.max_sessions,
            max_request_body_size=max_body,
        )
    if dashboard is not None:
        app.router.routes.insert(0, Mount(DASHBOARD_PATH, app=dashboard))
    gate = HttpGate(
        app, transport=settings.server.transport, registry=registry, settings=settings, health=health, grant=grant
    )
    config = uvicorn.Config(
        gate, host=host, port=port, log_level=server.settings.log_level.lower(), **settings.server.proxy_options()
    )
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, QueryStringRedactor) for f in access.filters):
        access.addFilter(QueryStringRedactor())
    await uvicorn.Server(config).serve()


class QueryStringRedactor(logging.Filter):
    """Access-log lines without query strings: a token pasted into a URL (which the dashboard
    refuses, advising to revoke it) must not also be written to the server's log in clear."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], args[2].split("?", 1)[0] + "?[query omitted]", *args[3:])
        return True
