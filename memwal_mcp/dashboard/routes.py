"""The dashboard's pages and forms, over MemoryService alone.

Every page calls the service methods the MCP tools call, with the same owner, limits and errors:
the owner is the session's (a token's owner, or the configured owner on a server without any
token), a missing 'read' scope keeps a token out and a missing 'write' scope refuses forget and
undo, and an id of another owner's memory is the NotFound the tools answer, here a 404 page.

State-changing requests are POSTs that carry the session's CSRF token and, when the browser says
where they come from (Origin, Sec-Fetch-Site), come from this dashboard. A page never puts a
token in a URL, and memory text reaches the page only through autoescaped templates.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import InvalidInput, MemwalError, NotFound
from ..ratelimit import RateLimiter
from ..recall.format import copies_note, folded_note
from ..service import MemoryService
from ..tokens import SCOPES, TokenRegistry
from . import chart
from .diff import word_diff
from .session import COOKIE, SIGNIN_COOKIE, SIGNIN_S, Session, SessionBook, SigninGuard, clear_cookie, set_cookie
from .templating import render

log = logging.getLogger(__name__)

FORM_LIMIT = 16 * 1024  # bytes of a form body: a token and a CSRF value
PAGE_SIZE = 25
ACTIVITY_DAYS = 30
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_STYLE = resources.files("memwal_mcp.dashboard").joinpath("static/style.css").read_bytes()

# The browser may run nothing the page did not ship and send forms nowhere else. Memory text is
# escaped by the templates whatever this says; the policy is a second wall, not the first.
_HEADERS = {
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


@dataclass(frozen=True, slots=True)
class Viewer:
    """What the page header and buttons need to know about who is looking."""

    owner: str
    can_write: bool
    signed_in: bool  # False: the configured owner of a server without tokens (no sign-out)
    csrf: str


Form = dict[str, str]
Handler = Callable[[Request, Session, Form], Awaitable[Response]]


class Refused(Exception):
    """A request this dashboard will not serve, with the page that says why."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class Dashboard:
    def __init__(
        self,
        service: MemoryService,
        registry: TokenRegistry,
        *,
        owner: str,
        any_host: bool = False,
    ) -> None:
        """`owner` is whom a server without tokens acts for. Such a server answers only requests
        addressed to a loopback name unless `any_host` (the operator's --insecure-no-auth): a
        page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) gets nothing."""
        self._service = service
        self._registry = registry
        self._owner = owner
        self._any_host = any_host
        self._sessions = SessionBook()
        self._signin = SigninGuard()
        auth = service.settings.auth
        self._limiter = RateLimiter(auth.rate_per_minute, auth.burst)

    def app(self) -> Starlette:
        page = self._page
        routes = [
            Route("/", page(self._index)),
            Route("/signin", self._signin_form, methods=["GET"]),
            Route("/signin", self._signin_post, methods=["POST"]),
            Route("/signout", page(self._signout, post=True), methods=["POST"]),
            Route("/search", page(self._search)),
            Route("/memories", page(self._browse)),
            Route("/memories/{memory_id}", page(self._memory)),
            Route("/memories/{memory_id}/forget", page(self._forget_confirm, scope="write")),
            Route("/memories/{memory_id}/forget", page(self._forget, post=True, scope="write"), methods=["POST"]),
            Route("/memories/{memory_id}/undo", page(self._undo, post=True, scope="write"), methods=["POST"]),
            Route("/activity", page(self._activity)),
            Route("/static/style.css", self._style),
        ]
        return Starlette(routes=routes, exception_handlers={HTTPException: self._http_error})

    # --- plumbing ----------------------------------------------------------------------------

    def _page(
        self, handler: Handler, *, post: bool = False, scope: str = "read"
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            access = await self._access(request)
            if isinstance(access, Response):
                return _secured(access)
            session, new = access
            try:
                self._spend(session)
                form: Form = {}
                if post:
                    form = await _form(request)
                    if not _same_origin(request) or not session.csrf_ok(form.get("csrf")):
                        raise Refused(
                            403,
                            "This form was not sent from this dashboard, or its page is too old: "
                            "reload the page and try again.",
                        )
                if not session.can(scope):
                    raise Refused(403, f"This token lacks the '{scope}' scope that this needs.")
                response = await handler(request, session, form)
            except Refused as exc:
                response = self._error(request, session, exc.status, str(exc))
                response.headers.update(exc.headers)
            except NotFound as exc:
                response = self._error(request, session, 404, str(exc))
            except InvalidInput as exc:
                response = self._error(request, session, 400, str(exc))
            except MemwalError as exc:
                log.warning("dashboard: %s", exc)
                response = self._error(request, session, 503, str(exc))
            if new:
                set_cookie(response, COOKIE, session.id, path=_base(request), secure=_https(request), max_age=24 * 3600)
            return _secured(response)

        return endpoint

    async def _access(self, request: Request) -> tuple[Session, bool] | Response:
        """The session this request acts in (and whether it is new), or where to send the browser."""
        secured = await self._registry.secured()
        session = self._sessions.get(request.cookies.get(COOKIE))
        if session is not None:
            if session.token_hash is None:
                if secured:  # a token exists now: acting for the configured owner is over
                    self._sessions.close(session.id)
                    session = None
            else:
                principal = await self._registry.resolve_hash(session.token_hash)
                if principal is None or "read" not in principal.scopes:
                    self._sessions.close(session.id)
                    session = None
        if session is not None:
            if session.token_hash is None and not self._host_ok(request):
                return self._bare_error(request, 403, _WRONG_HOST)
            return session, False
        if secured:
            return RedirectResponse(f"{_base(request)}/signin", status_code=303)
        if not self._host_ok(request):
            return self._bare_error(request, 403, _WRONG_HOST)
        return self._sessions.open(self._owner, frozenset(SCOPES), None), True

    def _host_ok(self, request: Request) -> bool:
        if self._any_host:
            return True
        host = urlsplit(f"//{request.headers.get('host', '')}").hostname or ""
        return host in _LOOPBACK_NAMES

    def _spend(self, session: Session) -> None:
        """A token's requests spend from a bucket of the [auth] rate, as its MCP calls do."""
        if session.token_hash is None:
            return
        wait = self._limiter.take(session.token_hash)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise Refused(
                429, f"Too many requests for this token: retry after {seconds} s.", {"Retry-After": str(seconds)}
            )

    def _html(
        self, request: Request, session: Session | None, template: str, *, status: int = 200, **context: Any
    ) -> HTMLResponse:
        viewer = (
            Viewer(session.owner, session.can("write"), session.token_hash is not None, session.csrf)
            if session is not None
            else None
        )
        flash = session.take_flash() if session is not None else []
        context.setdefault("nav", "")
        page = render(template, base=_base(request), who=viewer, flash=flash, **context)
        return HTMLResponse(page, status_code=status)

    def _error(self, request: Request, session: Session | None, status: int, message: str) -> HTMLResponse:
        return self._html(request, session, "error.html", status=status, status_code=status, message=message)

    def _bare_error(self, request: Request, status: int, message: str) -> Response:
        return self._error(request, None, status, message)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page." if status == 404 else "That request cannot be served here."
        return _secured(self._bare_error(request, status, message))

    async def _style(self, request: Request) -> Response:
        return Response(_STYLE, media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    # --- signing in and out --------------------------------------------------------------------

    async def _signin_form(self, request: Request) -> Response:
        if "token" in request.query_params:
            # Someone built a link with the token in it: it is in a history and a log now.
            return _secured(
                self._bare_error(
                    request,
                    400,
                    "A token never goes in a URL (it ends up in histories and logs): paste it into the "
                    "sign-in form instead, and consider revoking this one (memwal-mcp token revoke).",
                )
            )
        if not await self._registry.secured():
            return RedirectResponse(f"{_base(request)}/search", status_code=303)
        return _secured(self._signin_page(request, 200, None))

    def _signin_page(self, request: Request, status: int, error: str | None) -> Response:
        nonce, field = self._signin.issue()
        response = self._html(request, None, "signin.html", status=status, signin=field, error=error)
        set_cookie(response, SIGNIN_COOKIE, nonce, path=_base(request), secure=_https(request), max_age=int(SIGNIN_S))
        return response

    async def _signin_post(self, request: Request) -> Response:
        try:
            form = await _form(request)
        except Refused as exc:
            return _secured(self._bare_error(request, exc.status, str(exc)))
        if not _same_origin(request) or not self._signin.check(request.cookies.get(SIGNIN_COOKIE), form.get("signin")):
            return _secured(
                self._signin_page(request, 403, "The sign-in form was too old or came from elsewhere: try again.")
            )
        token = form.get("token", "").strip()
        principal = await self._registry.resolve(token) if token else None
        if principal is None or principal.token_hash is None:
            return _secured(self._signin_page(request, 401, "That token is not valid (unknown or revoked)."))
        if "read" not in principal.scopes:
            return _secured(
                self._signin_page(
                    request, 403, "That token lacks the 'read' scope the dashboard needs to show anything."
                )
            )
        old = request.cookies.get(COOKIE)
        if old:
            self._sessions.close(old)  # a fresh id at sign-in: a planted cookie gains nothing
        session = self._sessions.open(principal.owner, principal.scopes, principal.token_hash)
        response = RedirectResponse(f"{_base(request)}/search", status_code=303)
        secure = _https(request)
        set_cookie(response, COOKIE, session.id, path=_base(request), secure=secure, max_age=24 * 3600)
        clear_cookie(response, SIGNIN_COOKIE, path=_base(request), secure=secure)
        return _secured(response)

    async def _signout(self, request: Request, session: Session, form: Form) -> Response:
        self._sessions.close(session.id)
        response = RedirectResponse(f"{_base(request)}/signin", status_code=303)
        clear_cookie(response, COOKIE, path=_base(request), secure=_https(request))
        return response

    # --- pages ---------------------------------------------------------------------------------

    async def _index(self, request: Request, session: Session, form: Form) -> Response:
        return RedirectResponse(f"{_base(request)}/search", status_code=303)

    async def _search(self, request: Request, session: Session, form: Form) -> Response:
        args = request.query_params
        values = {name: args.get(name, "") for name in ("q", "namespace", "since", "until", "limit", "min_score")}
        values["namespace"] = values["namespace"] or "*"
        namespaces = await self._service.namespaces(session.owner)
        result = None
        error = None
        if values["q"]:
            try:
                result = await self._service.recall(
                    session.owner,
                    values["q"],
                    _number(values["limit"], "limit", int) if values["limit"] else 10,
                    values["namespace"],
                    _number(values["min_score"], "min_score", float),
                    values["since"] or None,
                    values["until"] or None,
                )
            except InvalidInput as exc:
                error = str(exc)
        hits = []
        if result is not None:
            for hit in result.hits:
                duplicates = hit.copies - hit.folded_by_llm
                notes = [copies_note(duplicates)] if duplicates > 0 else []
                if hit.folded_by_llm > 0:
                    notes.append(folded_note(hit.folded_by_llm))
                hits.append({"hit": hit, "notes": notes})
        return self._html(
            request,
            session,
            "search.html",
            status=400 if error else 200,
            nav="search",
            values=values,
            namespaces=namespaces,
            result=result,
            hits=hits,
            error=error,
        )

    async def _browse(self, request: Request, session: Session, form: Form) -> Response:
        args = request.query_params
        namespace = args.get("namespace", "") or "*"
        since = args.get("since", "")
        cursor = args.get("cursor") or None
        limit = _number(args["limit"], "limit", int) if args.get("limit") else PAGE_SIZE
        namespaces = await self._service.namespaces(session.owner)
        error = None
        page = None
        try:
            page = await self._service.list(session.owner, namespace, cursor, limit, since or None)
        except InvalidInput as exc:
            error = str(exc)
        kept = {k: v for k, v in (("namespace", namespace), ("since", since), ("limit", args.get("limit", ""))) if v}
        next_url = None
        if page is not None and page.next_cursor is not None:
            next_url = f"{_base(request)}/memories?{urlencode({**kept, 'cursor': page.next_cursor})}"
        first_url = f"{_base(request)}/memories?{urlencode(kept)}" if cursor else None
        return self._html(
            request,
            session,
            "browse.html",
            status=400 if error else 200,
            nav="browse",
            values={"namespace": namespace, "since": since},
            namespaces=namespaces,
            page=page,
            next_url=next_url,
            first_url=first_url,
            error=error,
        )

    async def _memory(self, request: Request, session: Session, form: Form) -> Response:
        history = await self._service.history(session.owner, request.path_params["memory_id"])
        if history.status == "forgotten":
            raise Refused(410, f"Memory {history.memory_id} was forgotten: its text is erased.")
        changes = []
        newer = history.body
        for revision in history.revisions:  # newest first: each was replaced by the body after it
            changes.append({"revision": revision, "runs": word_diff(revision.body, newer), "after": newer})
            newer = revision.body
        return self._html(
            request,
            session,
            "memory.html",
            nav="browse",
            history=history,
            changes=changes,
        )

    async def _forget_confirm(self, request: Request, session: Session, form: Form) -> Response:
        history = await self._service.history(session.owner, request.path_params["memory_id"])
        if history.status == "forgotten":
            raise Refused(410, f"Memory {history.memory_id} was forgotten already: its text is erased.")
        return self._html(request, session, "forget.html", nav="browse", history=history)

    async def _forget(self, request: Request, session: Session, form: Form) -> Response:
        done = await self._service.forget(session.owner, request.path_params["memory_id"])
        if done.already:
            session.flash.append(f"{done.memory_id} was already forgotten; nothing else was erased.")
        else:
            memories = ", ".join(done.erased_memories)
            session.flash.append(
                f"Forgot {memories}: {len(done.erased_memories)} memor{'y' if len(done.erased_memories) == 1 else 'ies'}"
                f" and {done.erased_jobs} remember job{'' if done.erased_jobs == 1 else 's'} erased."
            )
            if not done.wal_cleared:
                session.flash.append(
                    "A reader's snapshot still holds an older copy in the database's write-ahead log; "
                    "memwal-mcp empties it as soon as that reader is done."
                )
        return RedirectResponse(f"{_base(request)}/memories", status_code=303)

    async def _undo(self, request: Request, session: Session, form: Form) -> Response:
        memory_id = request.path_params["memory_id"]
        done = await self._service.undo(session.owner, memory_id)
        line = f"Undid the last change of {done.memory_id}: its previous body is back."
        if done.restored:
            line += f" Live again on their own: {', '.join(done.restored)}."
        session.flash.append(line)
        return RedirectResponse(f"{_base(request)}/memories/{done.memory_id}", status_code=303)

    async def _activity(self, request: Request, session: Session, form: Form) -> Response:
        activity = await self._service.activity(session.owner, ACTIVITY_DAYS)
        decisions = sorted(activity.decisions.items(), key=lambda item: (-item[1], item[0]))
        # Server-wide figures say what every owner did: only the configured owner of a server
        # without tokens (whose server it is) sees them.
        stats = await self._service.stats() if session.token_hash is None else None
        return self._html(
            request,
            session,
            "activity.html",
            nav="activity",
            activity=activity,
            per_day=chart.columns(activity.per_day, f"Remembers per day, last {ACTIVITY_DAYS} days (UTC)"),
            by_kind=chart.rows(decisions, "Curation decisions by kind") if decisions else None,
            decisions=decisions,
            total=sum(count for _, count in activity.per_day),
            stats=stats,
        )


_WRONG_HOST = (
    "This dashboard acts for its configured owner without a token, so it answers only at a loopback address "
    "(http://127.0.0.1:PORT/ui/). Open it there, or create a token (memwal-mcp token create) to sign in from anywhere."
)


def _base(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


def _https(request: Request) -> bool:
    return request.url.scheme == "https"


def _secured(response: Response) -> Response:
    for name, value in _HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _same_origin(request: Request) -> bool:
    """False when the browser says the form came from another site. A browser that says nothing
    (no Origin, no Sec-Fetch-Site) is judged by the CSRF token alone."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.headers.get("host", "")


async def _form(request: Request) -> Form:
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


def _number(value: str, name: str, kind: type[int] | type[float]) -> Any:
    """A number typed into a form; the service then checks its range with the tools' own words."""
    if not value:
        return None
    try:
        return kind(value.strip())
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise InvalidInput(f"{name} must be {what}, got {value!r}") from None


def build_dashboard(
    service: MemoryService, registry: TokenRegistry, *, owner: str, any_host: bool = False
) -> Starlette:
    """The dashboard as an ASGI app, to mount at /ui (see Dashboard)."""
    return Dashboard(service, registry, owner=owner, any_host=any_host).app()
