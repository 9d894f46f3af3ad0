"""Who a dashboard request acts for, and whether its form may change anything.

With tokens, the session a sign-in opened (session.py), its token re-checked by hash on every
request. Without any token, the configured owner, but only for requests addressed to a loopback
name (unless the operator passed --insecure-no-auth): a page elsewhere whose name was made to
resolve to 127.0.0.1 (DNS rebinding) gets nothing. A POST changes something only with the
session's CSRF token, and not when the browser says it comes from another site.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qsl, urlsplit

from starlette.requests import Request
from starlette.responses import Response

from ..ratelimit import SharedRateLimiter
from ..tokens import SCOPES, TokenRegistry
from .session import COOKIE, Session, SessionBook

Form = dict[str, str]
FORM_LIMIT = 16 * 1024  # bytes of a form body: a token and a CSRF value
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

WRONG_HOST = (
    "This dashboard acts for its configured owner without a token, so it answers only at a loopback address "
    "(http://127.0.0.1:PORT/ui/). Open it there, or create a token (memwal-mcp token create) to sign in from anywhere."
)
STALE_FORM = "This form was not sent from this dashboard, or its page is too old: reload the page and try again."

# The browser may run nothing the page did not ship and send forms nowhere else. Memory text is
# escaped by the templates whatever this says; the policy is a second wall, not the first.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # A search's query is in its URL: no other site sees it. (no-referrer would also make the
    # browser send "Origin: null" with the forms, which the CSRF check refuses.)
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Refused(Exception):
    """A request the dashboard will not serve: the status and what the page says."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class SignInFirst(Exception):
    """No session, and tokens exist: the browser goes to the sign-in form."""


class Access:
    def __init__(self, registry: TokenRegistry, limiter: SharedRateLimiter, *, owner: str, any_host: bool) -> None:
        self.registry = registry
        self.sessions = SessionBook()
        self._limiter = limiter
        self._owner = owner
        self._any_host = any_host

    async def session(self, request: Request) -> tuple[Session, bool]:
        """The session this request acts in, and True when it was opened just now (its cookie is
        still to be set). Raises SignInFirst or Refused."""
        secured = await self.registry.secured()
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is not None:
            if session.token_hash is None:
                if secured:  # a token exists now: acting for the configured owner is over
                    self.sessions.close(session.id)
                    session = None
            else:
                principal = await self.registry.resolve_hash(session.token_hash)
                if principal is None or "read" not in principal.scopes:
                    self.sessions.close(session.id)
                    session = None
        if session is None and secured:
            raise SignInFirst
        if (session is None or session.token_hash is None) and not self._host_ok(request):
            raise Refused(403, WRONG_HOST)
        if session is not None:
            return session, False
        return self.sessions.open(self._owner, frozenset(SCOPES), None), True

    def _host_ok(self, request: Request) -> bool:
        if self._any_host:
            return True
        host = urlsplit(f"//{request.headers.get('host', '')}").hostname or ""
        return host in _LOOPBACK_NAMES

    async def spend(self, session: Session) -> None:
        """A token's requests spend from a bucket of the [auth] rate: a bucket of the dashboard's
        own (its MCP requests spend from the gate's), kept by the store when it keeps buckets
        (PostgreSQL), so replicas behind one balancer share one limit per token."""
        if session.token_hash is None:
            return
        wait = await self._limiter.take(f"ui:{session.token_hash}")
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise Refused(
                429, f"Too many requests for this token: retry after {seconds} s.", {"Retry-After": str(seconds)}
            )

    @staticmethod
    async def changing_form(request: Request, session: Session, scope: str) -> Form:
        """The form of a POST that may change something for this session, or Refused."""
        form = await read_form(request)
        if not same_origin(request) or not session.csrf_ok(form.get("csrf")):
            raise Refused(403, STALE_FORM)
        if not session.can(scope):
            raise Refused(403, f"This token lacks the '{scope}' scope that this needs.")
        return form


def base(request: Request) -> str:
    """Where the dashboard is mounted (/ui), for its links and its cookies' path."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def https(request: Request) -> bool:
    return request.url.scheme == "https"


def with_headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def same_origin(request: Request) -> bool:
    """False when the browser says the form came from another site. A browser that says nothing
    (no Origin, no Sec-Fetch-Site) is judged by the CSRF token alone."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.headers.get("host", "")


async def read_form(request: Request) -> Form:
    """An urlencoded form of at most FORM_LIMIT bytes (the dashboard's forms carry a token at most)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "The dashboard's forms are sent as application/x-www-form-urlencoded.")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_LIMIT:
            raise Refused(413, f"That form is larger than {FORM_LIMIT} bytes.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, "That form is not UTF-8.") from None
    return dict(parse_qsl(text, keep_blank_values=True))
