"""The MCP surface: tools, their schemas and annotations, server instructions, transports.

Thin on purpose: parse arguments, call MemoryService, format the reply. Domain
errors become tool errors (isError) with the service's message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, cast

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import __version__, validation
from .errors import MemwalError
from .recall.format import recall_text
from .request_size import max_request_bytes
from .schemas import (
    AnalyzeOut,
    ForgetOut,
    HistoryOut,
    JobOut,
    ListOut,
    RecallOut,
    RememberItem,
    RememberManyOut,
    RememberOut,
    StatusOut,
    analyze_text,
    erasure_kept,
    history_text,
    job_line,
    list_text,
    remember_line,
    remember_many_text,
)
from .service import MemoryService
from .stdio_guard import reserve_stdin_for_protocol, reserve_stdout_for_protocol
from .stdio_replies import Reply, encode, line_too_long, params_problem, parse_line
from .tokens import Principal

log = logging.getLogger(__name__)

DRAIN_TIMEOUT_S = 40.0
"""How long a stdio server keeps serving the requests it already read once its input ends: longer than the
longest call (a remember or status waiting its wait_ms, at most 30 s), so no call is cut short."""
# How much of a line over the limit is kept to find the request's id in (it comes before the params).
ID_SEARCH_BYTES = 64 * 1024


INSTRUCTIONS = """\
memwal is your long-term memory across conversations.

Recall first: before work that may touch past context (the user's preferences, \
earlier decisions, project conventions, names, configuration values), call \
memwal_recall with a short query describing what you need.

Remember what will matter later: stable preferences, decisions and their reasons, \
constraints, corrections the user made, and configuration values (hosts, versions, \
paths). One self-contained fact per call, in plain words, e.g. "User prefers dark \
roast coffee". Never store secrets (passwords, tokens, keys). Saying a fact again \
is harmless: duplicates are folded and recall reports how many copies it collapsed.

When the user corrects a remembered fact or changes a preference, remember the new \
fact with supersedes set to the old memory's id (from memwal_recall): the old one \
leaves recall but is kept. A fact true only until some date gets expires_at. Several \
facts at once go in one memwal_remember_many call. At the end of a long conversation, \
memwal_analyze can extract the facts worth keeping from it (when an LLM is configured).
"""


def _reply(text: str, model: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=model.model_dump())


class _ExplainUninitialized:
    """Middleware: the SDK refuses a request before `initialize`, and params of the wrong shape, as
    "Invalid request parameters" with empty data, which tells a client nothing; this says what is
    wrong and what to do."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError as exc:  # the SDK's check of the params against the method's schema
            raise MCPError(code=INVALID_PARAMS, message=params_problem(ctx.method, exc)) from exc
        except MCPError as exc:
            gate = exc.code == INVALID_PARAMS and exc.data == "" and exc.message == "Invalid request parameters"
            if gate and ctx.method != "initialize" and ctx.session.client_params is None:
                raise MCPError(
                    code=INVALID_PARAMS,
                    message=f"Invalid request parameters: {ctx.method} came before initialize; "
                    "send initialize first (then notifications/initialized)",
                    data="send initialize first",
                ) from exc
            raise


class _LiteralArguments(FuncMetadata):
    """Tool metadata that takes arguments as sent. The SDK's own reads a string argument as JSON
    where the schema wants something else, so '["j_1"]' passes for a list and "null" for null."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


class _Server(MCPServer):
    """MCPServer with strict tool arguments worded the way memwal's own validation words errors,
    and a stdio transport that answers every line JSON-RPC says must be answered."""

    def __init__(self, *args: Any, max_line_bytes: int = DEFAULT_MAX_REQUEST_BODY_SIZE, **kwargs: Any) -> None:
        super().__init__(*args, middleware=[_ExplainUninitialized()], **kwargs)
        self._max_line_bytes = max_line_bytes

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, *args: Any, **kwargs: Any) -> None:
        """Register a tool whose arguments are strict: an unknown argument is refused, not ignored, and
        no value is coerced ("3" or true is not an integer, "yes" is not a boolean). The input
        schema says so (additionalProperties: false) for clients that check before sending."""
        super().add_tool(fn, name, *args, **kwargs)
        tool = self._tool_manager.get_tool(name or fn.__name__)
        assert tool is not None
        meta = tool.fn_metadata
        strict = cast(
            type[ArgModelBase],
            type(
                meta.arg_model.__name__,
                (meta.arg_model,),
                {"model_config": ConfigDict(extra="forbid", strict=True), "__module__": meta.arg_model.__module__},
            ),
        )
        tool.fn_metadata = _LiteralArguments(
            arg_model=strict,
            output_schema=meta.output_schema,
            output_model=meta.output_model,
            wrap_output=meta.wrap_output,
        )
        tool.parameters = strict.model_json_schema(by_alias=True)

    async def call_tool(self, name, arguments, context=None):  # type: ignore[no-untyped-def]
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                # The same prefix the SDK gives every other refusal of this tool.
                tool = self._tool_manager.get_tool(name)
                schema = tool.parameters if tool is not None else None
                message = validation.argument_errors(exc.__cause__.errors(), schema)
                raise ToolError(f"Error executing tool {name}: {message}") from exc.__cause__
            raise

    async def run_stdio_async(self) -> None:
        """Serve over stdin and stdout, reading and writing the lines here (stdio_replies says why)."""
        wire_in, wire_out = reserve_stdin_for_protocol(), reserve_stdout_for_protocol()
        limit = self._max_line_bytes
        to_session, session_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        session_out, to_wire = anyio.create_memory_object_stream[SessionMessage](0)
        replies = session_out.clone()

        def next_line() -> bytes | Reply:
            """A line of at most `limit` bytes; the reply to a longer one (skipped, its start kept to find
            its id); b"" at the end of input."""
            line = wire_in.readline(limit + 1)
            if len(line) <= limit or line.endswith(b"\n"):
                return line
            start = line[:ID_SEARCH_BYTES]
            del line
            while (rest := wire_in.readline(1 << 16)) and not rest.endswith(b"\n"):
                pass
            return line_too_long(limit, start)

        # Requests handed to the session and not answered yet: at the end of input they are still served
        # (a client may write its requests and close stdin at once), for at most DRAIN_TIMEOUT_S.
        unanswered: set[Any] = set()
        all_answered = anyio.Event()

        async def drain() -> None:
            if unanswered:
                log.info("end of input: finishing %d request(s) already read", len(unanswered))
                with anyio.move_on_after(DRAIN_TIMEOUT_S) as waited:
                    await all_answered.wait()
                if waited.cancelled_caught:
                    log.warning(
                        "end of input: %d request(s) unanswered after %s s; stopping", len(unanswered), DRAIN_TIMEOUT_S
                    )

        def note(message: JSONRPCMessage) -> None:
            nonlocal all_answered
            if isinstance(message, JSONRPCRequest):
                if not unanswered:
                    all_answered = anyio.Event()
                unanswered.add(message.id)
            elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                answered((message.params or {}).get("requestId"))  # a cancelled request is never answered

        def answered(request_id: Any) -> None:
            unanswered.discard(request_id)
            if not unanswered:
                all_answered.set()

        async def read() -> None:
            async with to_session, replies:
                while (line := await anyio.to_thread.run_sync(next_line, abandon_on_cancel=True)) != b"":
                    try:
                        parsed = line if isinstance(line, Reply) else parse_line(line)
                    except Exception:  # no line may stop the server
                        log.exception("could not read a request line")
                        parsed = Reply(
                            JSONRPCError(
                                jsonrpc="2.0",
                                id=None,
                                error=ErrorData(
                                    code=PARSE_ERROR, message="Parse error: the request line could not be read"
                                ),
                            )
                        )
                    try:
                        if isinstance(parsed, Reply):
                            log.info("answered a request line that cannot be served: %s", parsed.error.error.message)
                            await replies.send(SessionMessage(parsed.error))
                        elif parsed is not None:
                            note(parsed)
                            await to_session.send(SessionMessage(parsed))
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return  # the session or the writer has ended: serving is over
                await drain()

        def put(data: bytes) -> None:
            wire_out.write(data)
            wire_out.flush()

        async def write(stop: anyio.CancelScope) -> None:
            async with to_wire:
                async for item in to_wire:
                    data = encode(item.message)
                    if data is not None:
                        try:
                            await anyio.to_thread.run_sync(put, data)
                        except OSError as exc:  # the client closed its end: nobody is left to serve
                            log.info("stdout is closed (%s); stopping", exc)
                            stop.cancel()
                            return
                    if isinstance(item.message, (JSONRPCResponse, JSONRPCError)):
                        answered(item.message.id)

        async with anyio.create_task_group() as tg:
            tg.start_soon(write, tg.cancel_scope)
            async with anyio.create_task_group() as serving:
                serving.start_soon(read)
                lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async runs, too
                async with session_out:
                    await lowlevel.run(session_in, session_out, lowlevel.create_initialization_options())
                serving.cancel_scope.cancel()


def build_server(service: MemoryService, owner: str) -> MCPServer:
    """An MCPServer whose tools act for the caller's token owner, or for `owner` when
    there is no token (stdio, or an HTTP server while no token exists). Over HTTP,
    http_app.HttpGate authenticates and rate-limits every request before it gets here."""
    line_limit = max_request_bytes(service.settings.limits.max_text_bytes)
    server = _Server(name="memwal", instructions=INSTRUCTIONS, version=__version__, max_line_bytes=line_limit)

    def caller(scope: str, tool: str) -> str:
        """The owner this call acts for, after the scope check."""
        access = get_access_token()
        if access is None:
            principal = Principal(owner, frozenset({"read", "write"}), None)
        else:
            principal = Principal(access.subject or access.client_id, frozenset(access.scopes), access.token)
        if scope not in principal.scopes:
            raise ToolError(f"this token lacks the '{scope}' scope that {tool} needs")
        return principal.owner

    async def call(coro):
        try:
            return await coro
        except MemwalError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(
        name="memwal_remember",
        title="Remember a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    async def memwal_remember(
        text: Annotated[
            str, Field(description="The fact to keep, self-contained, e.g. 'User prefers dark roast coffee'")
        ],
        namespace: Annotated[str | None, Field(description="Partition inside your memory")] = "default",
        idempotency_key: Annotated[
            str | None, Field(description="Send the same key when retrying a call, so it is stored once")
        ] = None,
        wait_ms: Annotated[int | None, Field(description="Wait up to this long (0-30000) for curation to finish")] = 0,
        occurred_at: Annotated[
            str | None, Field(description="When the fact happened, ISO-8601 (e.g. '2026-11-30T14:00:00Z'), if not now")
        ] = None,
        expires_at: Annotated[
            str | None,
            Field(
                description="When the fact stops being true, ISO-8601; from then on recall and list leave it out "
                "(it is kept). A date alone means the end of that day, UTC: '2026-12-05' is recalled all of "
                "Dec 5. A time means that instant. A past one is accepted: the fact is stored already expired"
            ),
        ] = None,
        supersedes: Annotated[
            list[str] | None,
            Field(
                description="Ids of memories this fact replaces (a correction, a changed preference): they leave "
                "recall at once, while the fact is still queued, but are kept, and undo brings them back"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, RememberOut]:
        """Keep a fact in long-term memory. Returns at once with a job id; curation (folding
        duplicates) runs in the background, and recall sees the fact immediately.
        Remember preferences, decisions, constraints, corrections and configuration values;
        never secrets. With an idempotency_key, retries return the same job. When the fact
        corrects or replaces remembered ones, name them in supersedes."""
        outcome = await call(
            service.remember(
                caller("write", "memwal_remember"),
                text,
                namespace,
                idempotency_key,
                wait_ms,
                occurred_at,
                expires_at,
                supersedes,
            )
        )
        out = RememberOut.of_outcome(outcome)
        return _reply(remember_line(out), out)

    @server.tool(
        name="memwal_remember_many",
        title="Remember many facts",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    async def memwal_remember_many(
        items: Annotated[
            list[RememberItem],
            Field(
                description="1-100 facts, each {text, namespace?, idempotency_key?, occurred_at?, expires_at?, "
                "supersedes?}"
            ),
        ],
        wait_ms: Annotated[int | None, Field(description="Wait up to this long (0-30000) for curation to finish")] = 0,
    ) -> Annotated[CallToolResult, RememberManyOut]:
        """Keep many facts in one call, each as memwal_remember keeps one. Every item is checked
        first: one invalid item rejects the call (naming its index) and nothing is stored.
        Returns each item's job, in order; idempotency keys work per item."""
        outcomes = await call(
            service.remember_many(
                caller("write", "memwal_remember_many"),
                [item.model_dump(exclude_none=True) for item in items],
                wait_ms,
            )
        )
        out = RememberManyOut(jobs=[RememberOut.of_outcome(outcome) for outcome in outcomes])
        return _reply(remember_many_text(out), out)

    @server.tool(
        name="memwal_analyze",
        title="Extract facts from a text",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    async def memwal_analyze(
        text: Annotated[str, Field(description="A conversation or passage to extract the facts worth keeping from")],
        namespace: Annotated[str | None, Field(description="Partition inside your memory")] = "default",
        wait_ms: Annotated[int | None, Field(description="Wait up to this long (0-30000) for curation to finish")] = 0,
    ) -> Annotated[CallToolResult, AnalyzeOut]:
        """Have the configured LLM read a conversation or passage and remember each fact worth
        keeping (at most 50), every one curated like a memwal_remember (repeats fold, nothing
        is updated or deleted by extraction). The source text is kept as the analyze request
        each fact's history names. If extraction fails, the text is remembered whole and the
        reply says why. Needs an LLM configured."""
        outcome = await call(service.analyze(caller("write", "memwal_analyze"), text, namespace, wait_ms))
        out = AnalyzeOut.of(outcome)
        return _reply(analyze_text(out), out)

    @server.tool(
        name="memwal_remember_status",
        title="Check remember jobs",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memwal_remember_status(
        job_ids: Annotated[list[str], Field(description="Job ids returned by memwal_remember (at most 50)")],
        wait_ms: Annotated[int | None, Field(description="Wait up to this long (0-30000) for queued jobs")] = 0,
    ) -> Annotated[CallToolResult, StatusOut]:
        """Report what curation did with remember jobs: queued, done (decision and memory id),
        or failed (with the error)."""
        reports = await call(service.report(caller("read", "memwal_remember_status"), job_ids, wait_ms))
        out = StatusOut(jobs=[JobOut.of(r.job, r.extracted, r.memory, r.curated_here) for r in reports])
        return _reply("\n".join(job_line(job) for job in out.jobs), out)

    @server.tool(
        name="memwal_recall",
        title="Recall memories",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memwal_recall(
        query: Annotated[str, Field(description="What you need to know, e.g. 'coffee preferences'")],
        limit: Annotated[int | None, Field(description="Distinct facts to return, 1-100")] = 5,
        namespace: Annotated[
            str | None, Field(description="Partition to search; '*' searches all of yours")
        ] = "default",
        min_score: Annotated[float | None, Field(description="Drop hits scoring below this (0-1)")] = None,
        since: Annotated[str | None, Field(description="Only facts from this ISO-8601 date or time on")] = None,
        until: Annotated[str | None, Field(description="Only facts up to this ISO-8601 date or time")] = None,
        prefer_recent: Annotated[bool | None, Field(description="Rank newer facts higher")] = False,
        include_expired: Annotated[
            bool | None, Field(description="Also return facts past their expires_at (marked expired)")
        ] = False,
        include_superseded: Annotated[
            bool | None,
            Field(
                description="Also return facts another fact superseded, or a queued one is superseding (marked "
                "superseded_by: the memory, or the queued job j_...)"
            ),
        ] = False,
        max_chars: Annotated[
            int | None,
            Field(description="Keep the hit lines within this many characters: the best hits that fit, and a count"),
        ] = None,
    ) -> Annotated[CallToolResult, RecallOut]:
        """Find remembered facts relevant to a query, best first. Identical copies of a fact
        are collapsed into one hit with a note saying how many were folded, and the reply
        still holds `limit` distinct facts when that many exist. Expired and superseded
        facts are left out unless asked for."""
        result = await call(
            service.recall(
                caller("read", "memwal_recall"),
                query,
                limit,
                namespace,
                min_score,
                since,
                until,
                prefer_recent,
                include_expired,
                include_superseded,
                max_chars,
            )
        )
        return _reply(recall_text(result), RecallOut.of(result))

    @server.tool(
        name="memwal_history",
        title="History of a memory",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memwal_history(
        memory_id: Annotated[str, Field(description="A memory id from memwal_recall or memwal_remember_status")],
    ) -> Annotated[CallToolResult, HistoryOut]:
        """Show how a memory came to be: its previous bodies (revisions, with the decision,
        LLM model and MergeGuard outcome that replaced each) and the remember jobs folded
        into it, newest first."""
        out = HistoryOut.of(await call(service.history(caller("read", "memwal_history"), memory_id)))
        return _reply(history_text(out), out)

    @server.tool(
        name="memwal_forget",
        title="Forget a memory",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    )
    async def memwal_forget(
        memory_id: Annotated[
            str,
            Field(
                description="The id of the memory to erase, or of a [pending] hit's remember job (j_...), from memwal_recall"
            ),
        ],
    ) -> Annotated[CallToolResult, ForgetOut]:
        """Permanently erase a memory: its text, its previous versions and the remember
        requests it came from. Use when the user asks you to forget something or a stored
        fact is wrong. A pending hit's job id (j_...) works too: a fact still queued is erased
        before it becomes a memory; one curated meanwhile forgets the memory it became.
        A tombstone records that (and when) it was forgotten. Memories the erased one had
        superseded are live again (the reply names them): forget them too if they should go."""
        out = ForgetOut.of(await call(service.forget(caller("write", "memwal_forget"), memory_id)))
        summary = out.summary()
        line = (f"F{summary[1:]}" if summary.startswith("forgot") else summary) + "."
        if not out.wal_cleared:
            kept = erasure_kept(service.erasure_kept)
            line += f" Not yet from every file: {kept}; memwal-mcp retries and does that as soon as it can."
        return _reply(line, out)

    @server.tool(
        name="memwal_list",
        title="List memories",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memwal_list(
        namespace: Annotated[str | None, Field(description="Namespace to list; '*' for all of yours")] = "*",
        cursor: Annotated[str | None, Field(description="next_cursor from the previous page")] = None,
        limit: Annotated[int | None, Field(description="Memories per page, 1-100")] = 20,
        include_expired: Annotated[
            bool | Literal["only"] | None,
            Field(description='Also list memories past their expires_at; "only" for only those'),
        ] = False,
        include_superseded: Annotated[
            bool | Literal["only"] | None,
            Field(description='Also list memories another fact superseded; "only" for only those'),
        ] = False,
        since: Annotated[str | None, Field(description="Only facts from this ISO-8601 date or time on")] = None,
        until: Annotated[str | None, Field(description="Only facts up to this ISO-8601 date or time")] = None,
    ) -> Annotated[CallToolResult, ListOut]:
        """List what is remembered, newest first, a page at a time. Use for questions like
        "what do you remember about me?". Expired and superseded memories are left out unless
        asked for."""
        out = ListOut.of(
            await call(
                service.list(
                    caller("read", "memwal_list"),
                    namespace,
                    cursor,
                    limit,
                    since,
                    include_expired,
                    include_superseded,
                    until,
                )
            )
        )
        return _reply(list_text(out), out)

    return server
