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
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import InvalidInput, MemwalError, NotFound
from ..ratelimit import Grant, SharedRateLimiter
from ..recall.format import copies_note, folded_note
from ..records import ANALYZED, ForgetOutcome, Job
from ..schemas import ForgetOut, erasure_kept, sources_note
from ..service import MemoryService
from ..tokens import TokenRegistry
from ..wording import counted
from . import chart
from .access import Access, Form, Refused, SignInFirst, base, https, read_form, same_origin, with_headers
from .diff import word_diff
from .session import COOKIE, SIGNIN_COOKIE, SIGNIN_S, Session, SigninGuard, clear_cookie, set_cookie
from .templating import render

log = logging.getLogger(__name__)

PAGE_SIZE = 25
ACTIVITY_DAYS = 30
# Browse's choices for expired and superseded memories, as memwal_list's include_* options take them.
SHOWN: dict[str, bool | str] = {"hide": False, "show": True, "only": "only"}
_STYLE = resources.files("memwal_mcp.dashboard").joinpath("static/style.css").read_bytes()


@dataclass(frozen=True, slots=True)
class Viewer:
    """What the page header and buttons need to know about who is looking."""

    owner: str
    can_write: bool
    signed_in: bool  # False: the configured owner of a server without tokens (no sign-out)
    csrf: str


Handler = Callable[[Request, Session, Form], Awaitable[Response]]


class Dashboard:
    def __init__(
        self,
        service: MemoryService,
        registry: TokenRegistry,
        *,
        owner: str,
        any_host: bool = False,
        grant: Grant | None = None,
    ) -> None:
        """`owner` is whom a server without tokens acts for; `any_host` is the operator's
        --insecure-no-auth (see access.py); `grant` the store's shared rate buckets (PostgreSQL),
        so that replicas behind one balancer share the sign-in limits."""
        self._service = service
        self._registry = registry
        self._signin = SigninGuard()
        auth = service.settings.auth
        shared = grant or _no_shared_buckets
        limiter = SharedRateLimiter(shared, auth.rate_per_minute, auth.burst)
        self._access = Access(registry, limiter, owner=owner, any_host=any_host)
        # Each a bucket of a minute's attempts, refilled over the minute: guessing tokens from one
        # address, or from many, is slowed to that pace.
        self._signin_per_client = SharedRateLimiter(shared, auth.signin_per_minute, auth.signin_per_minute)
        self._signin_total = SharedRateLimiter(shared, auth.signin_per_minute_total, auth.signin_per_minute_total)

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
            Route("/jobs/{job_id}", page(self._job)),
            Route("/jobs/{job_id}/forget", page(self._job_forget_confirm, scope="write")),
            Route("/jobs/{job_id}/forget", page(self._job_forget, post=True, scope="write"), methods=["POST"]),
            Route("/activity", page(self._activity)),
            Route("/static/style.css", self._style),
        ]
        return Starlette(routes=routes, exception_handlers={HTTPException: self._http_error})

    # --- plumbing ----------------------------------------------------------------------------

    def _page(
        self, handler: Handler, *, post: bool = False, scope: str = "read"
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                session, new = await self._access.session(request)
            except SignInFirst:
                return with_headers(RedirectResponse(f"{base(request)}/signin", status_code=303))
            except Refused as exc:
                return with_headers(self._error(request, None, exc.status, str(exc)))
            try:
                await self._access.spend(session)
                if post:
                    form = await self._access.changing_form(request, session, scope)
                elif not session.can(scope):
                    raise Refused(403, f"This token lacks the '{scope}' scope that this needs.")
                else:
                    form = {}
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
                set_cookie(response, COOKIE, session.id, path=base(request), secure=https(request), max_age=24 * 3600)
            return with_headers(response)

        return endpoint

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
        page = render(template, base=base(request), who=viewer, flash=flash, **context)
        return HTMLResponse(page, status_code=status)

    def _error(self, request: Request, session: Session | None, status: int, message: str) -> HTMLResponse:
        return self._html(request, session, "error.html", status=status, status_code=status, message=message)

    def _bare_error(self, request: Request, status: int, message: str) -> Response:
        return self._error(request, None, status, message)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page." if status == 404 else "That request cannot be served here."
        return with_headers(self._bare_error(request, status, message))

    async def _style(self, request: Request) -> Response:
        return Response(_STYLE, media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    # --- signing in and out --------------------------------------------------------------------

    async def _signin_form(self, request: Request) -> Response:
        if "token" in request.query_params:
            # Someone built a link with the token in it: it is in a history and a log now.
            return with_headers(
                self._bare_error(
                    request,
                    400,
                    "A token never goes in a URL (it ends up in histories and logs): paste it into the "
                    "sign-in form instead, and consider revoking this one (memwal-mcp token revoke).",
                )
            )
        if not await self._registry.secured():
            return RedirectResponse(f"{base(request)}/search", status_code=303)
        return with_headers(self._signin_page(request, 200, None))

    def _signin_page(self, request: Request, status: int, error: str | None) -> Response:
        nonce, field = self._signin.issue()
        response = self._html(request, None, "signin.html", status=status, signin=field, error=error)
        set_cookie(response, SIGNIN_COOKIE, nonce, path=base(request), secure=https(request), max_age=int(SIGNIN_S))
        return response

    async def _signin_post(self, request: Request) -> Response:
        refused = await self._signin_refused(request)
        if refused is not None:
            return with_headers(refused)
        try:
            form = await read_form(request)
        except Refused as exc:
            return with_headers(self._bare_error(request, exc.status, str(exc)))
        if not same_origin(request) or not self._signin.check(request.cookies.get(SIGNIN_COOKIE), form.get("signin")):
            return with_headers(
                self._signin_page(request, 403, "The sign-in form was too old or came from elsewhere: try again.")
            )
        token = form.get("token", "").strip()
        principal = await self._registry.resolve(token) if token else None
        if principal is None or principal.token_hash is None:
            return with_headers(self._signin_page(request, 401, "That token is not valid (unknown or revoked)."))
        if "read" not in principal.scopes:
            return with_headers(
                self._signin_page(
                    request, 403, "That token lacks the 'read' scope the dashboard needs to show anything."
                )
            )
        old = request.cookies.get(COOKIE)
        if old:
            self._access.sessions.close(old)  # a fresh id at sign-in: a planted cookie gains nothing
        session = self._access.sessions.open(principal.owner, principal.scopes, principal.token_hash)
        response = RedirectResponse(f"{base(request)}/search", status_code=303)
        secure = https(request)
        set_cookie(response, COOKIE, session.id, path=base(request), secure=secure, max_age=24 * 3600)
        clear_cookie(response, SIGNIN_COOKIE, path=base(request), secure=secure)
        return with_headers(response)

    async def _signin_refused(self, request: Request) -> Response | None:
        """A 429 sign-in page when this client address, or every address together, has tried too
        often in the last minute ([auth] signin_per_minute, signin_per_minute_total); else None."""
        client = request.client.host if request.client is not None else "unknown"
        for limiter, key, who in (
            (self._signin_per_client, f"signin:{client}", "from this address"),
            (self._signin_total, "signin:*", "on this server"),
        ):
            wait = await limiter.take(key)
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                message = f"Too many sign-in attempts {who}: retry after {seconds} s."
                response = self._signin_page(request, 429, message)
                response.headers["Retry-After"] = str(seconds)
                return response
        return None

    async def _signout(self, request: Request, session: Session, form: Form) -> Response:
        self._access.sessions.close(session.id)
        response = RedirectResponse(f"{base(request)}/signin", status_code=303)
        clear_cookie(response, COOKIE, path=base(request), secure=https(request))
        return response

    # --- pages ---------------------------------------------------------------------------------

    async def _index(self, request: Request, session: Session, form: Form) -> Response:
        return RedirectResponse(f"{base(request)}/search", status_code=303)

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
        names = ("namespace", "since", "until", "expired", "superseded", "limit")
        values = {name: args.get(name, "").strip() for name in names}
        values["namespace"] = values["namespace"] or "*"
        cursor = args.get("cursor") or None
        namespaces = await self._service.namespaces(session.owner)
        error = None
        page = None
        try:
            shown = {name: _choice(values[name] or "hide", name) for name in ("expired", "superseded")}
            page = await self._service.list(
                session.owner,
                values["namespace"],
                cursor,
                _number(values["limit"], "limit", int) if values["limit"] else PAGE_SIZE,
                values["since"] or None,
                shown["expired"],
                shown["superseded"],
                values["until"] or None,
            )
        except InvalidInput as exc:
            error = str(exc)
        kept = {k: v for k, v in values.items() if v and not (k in ("expired", "superseded") and v == "hide")}
        next_url = None
        if page is not None and page.next_cursor is not None:
            next_url = f"{base(request)}/memories?{urlencode({**kept, 'cursor': page.next_cursor})}"
        first_url = f"{base(request)}/memories?{urlencode(kept)}" if cursor else None
        return self._html(
            request,
            session,
            "browse.html",
            status=400 if error else 200,
            nav="browse",
            values=values,
            namespaces=namespaces,
            page=page,
            next_url=next_url,
            first_url=first_url,
            error=error,
            now=time.time(),
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
            expired=history.expires_at is not None and history.expires_at <= time.time(),
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
                f"Forgot {memories}: {counted(len(done.erased_memories), 'memory')}"
                f" and {counted(done.erased_jobs, 'remember job')} erased."
            )
            if done.sources:
                note = sources_note(list(done.sources))
                session.flash.append(note[0].upper() + note[1:] + ".")
            if done.restored:
                session.flash.append(
                    f"Live again, as it had superseded them: {', '.join(done.restored)} (forget them too if they"
                    " should go)."
                )
            if done.expired_back:
                session.flash.append(
                    f"No longer superseded, but expired, so still out of search: {', '.join(done.expired_back)}."
                )
            if done.disk_copies:  # PostgreSQL: said as the tool and the CLI say it (ForgetOut.summary)
                session.flash.append(done.disk_copies[0].upper() + done.disk_copies[1:] + ".")
            self._flash_kept(session, done)
        return RedirectResponse(f"{base(request)}/memories", status_code=303)

    def _flash_kept(self, session: Session, done: ForgetOutcome) -> None:
        """A forget whose copies a reader's snapshot still holds must say so, on every forget page."""
        if not done.wal_cleared:
            kept = erasure_kept(self._service.erasure_kept)
            session.flash.append(f"Not yet from every file: {kept}; memwal-mcp does that as soon as it can.")

    async def _undo(self, request: Request, session: Session, form: Form) -> Response:
        memory_id = request.path_params["memory_id"]
        done = await self._service.undo(session.owner, memory_id)
        line = f"Undid the last change of {done.memory_id}: its previous body is back."
        if done.superseded_again:
            line = f"Superseded again by {done.memory_id}, out of recall: {', '.join(done.superseded_again)}."
        if done.folded_again:
            line += f" Folded in again, out of recall: {', '.join(done.folded_again)}."
        if done.restored:
            line += f" Live again on their own: {', '.join(done.restored)}."
        session.flash.append(line)
        return RedirectResponse(f"{base(request)}/memories/{done.memory_id}", status_code=303)

    async def _job(self, request: Request, session: Session, form: Form) -> Response:
        job, facts = await self._service.job(session.owner, request.path_params["job_id"])
        if job.decision == "forgotten":
            raise Refused(410, f"{job.id} was forgotten: its text is erased.")
        return self._html(
            request, session, "job.html", nav="browse", job=job, facts=facts, request_kind=job.decision == ANALYZED
        )

    async def _forgettable_job(self, session: Session, job_id: object) -> tuple[Job, tuple[Job, ...]]:
        """The job and its facts, or the refusal: shared by the confirmation page and its POST, so a
        POST cannot erase what the page would never have offered (a curated job's memory)."""
        job, facts = await self._service.job(session.owner, job_id)
        if job.decision == "forgotten":
            raise Refused(410, f"{job.id} was forgotten already: its text is erased.")
        if job.decision != ANALYZED and job.status != "queued":
            memory = f"memory {job.memory_id}" if job.memory_id else "the memory it became"
            raise Refused(409, f"{job.id} was curated: forget {memory} instead, on its page.")
        return job, facts

    async def _job_forget_confirm(self, request: Request, session: Session, form: Form) -> Response:
        job, facts = await self._forgettable_job(session, request.path_params["job_id"])
        kept = [fact for fact in facts if fact.decision != "forgotten"]
        return self._html(
            request,
            session,
            "job_forget.html",
            nav="browse",
            job=job,
            kept=kept,
            request_kind=job.decision == ANALYZED,
        )

    async def _job_forget(self, request: Request, session: Session, form: Form) -> Response:
        await self._forgettable_job(session, request.path_params["job_id"])
        done = await self._service.forget(session.owner, request.path_params["job_id"])
        line = ForgetOut.of(done).summary()
        session.flash.append(line[:1].upper() + line[1:] + ".")
        self._flash_kept(session, done)
        return RedirectResponse(f"{base(request)}/memories", status_code=303)

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


def _choice(value: str, name: str) -> bool | str:
    """Browse's hide / show / only, as the service's include_expired / include_superseded."""
    if value not in SHOWN:
        raise InvalidInput(f"{name} must be hide, show or only, got {value!r}")
    return SHOWN[value]


async def _no_shared_buckets(key: str, want: int, rate: float, burst: float, now: float) -> tuple[int, float] | None:
    """A store that keeps no shared buckets: each process counts its own (see SharedRateLimiter)."""
    return None


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
    service: MemoryService,
    registry: TokenRegistry,
    *,
    owner: str,
    any_host: bool = False,
    grant: Grant | None = None,
) -> Starlette:
    """The dashboard as an ASGI app, to mount at /ui (see Dashboard)."""
    return Dashboard(service, registry, owner=owner, any_host=any_host, grant=grant).app()
