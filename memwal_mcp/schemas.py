"""Records as tools and commands return them: pydantic models (the tools' output schemas) and
their text renderings. Free of the MCP SDK, so CLI commands start without importing it."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .curation.extract import MAX_FACTS
from .recall.format import expiry_mark, last_day, superseded_mark
from .records import (
    ANALYZED,
    AnalyzeOutcome,
    ForgetOutcome,
    History,
    Hit,
    Job,
    MemoryNow,
    MemoryPage,
    RecallResult,
    RememberOutcome,
    UndoOutcome,
)
from .wording import agree, counted


def _iso(ts: float, millis: bool = False) -> str:
    """An instant in UTC, to the second; with `millis`, with the milliseconds it has too
    ("10:00:00.5", never float noise such as "10:00:00.499999")."""
    try:
        whole, ms = _split(ts)
        moment = datetime.fromtimestamp(whole, tz=timezone.utc)
    except (OverflowError, ValueError, OSError):  # stored before instants were range-checked
        return f"@{ts}"
    fraction = f".{ms:03d}".rstrip("0").rstrip(".") if millis else ""
    return moment.replace(tzinfo=None).isoformat() + fraction + "+00:00"


def _split(ts: float) -> tuple[int, int]:
    """Whole seconds, and the latest millisecond whose instant, as a time given is parsed (integer
    microseconds over 10**6), is not after `ts`. Cut, never rounded up: the time shown, given back as
    `since` or `until`, still includes the instant. But not cut by its float digits: far in the future a
    float is coarser than a microsecond, and "9999-06-15T10:00:00.123" is stored as ...00.12299...,
    whose digits would show the millisecond before the one given."""
    whole = math.floor(ts)
    ms = min(999, int((ts - whole) * 1000))  # exact subtraction; the product may be a unit off either way
    while ms < 999 and (whole * 1000 + ms + 1) / 1000 <= ts:
        ms += 1
    while ms > 0 and (whole * 1000 + ms) / 1000 > ts:
        ms -= 1
    return whole, ms


class ToolOut(BaseModel):
    """A tool's output record. Its JSON schema (the tool's outputSchema) is written plainly: a
    nullable field as one `type` list rather than `anyOf` of two schemas, a nested record inline
    rather than as a `$ref`. A client may check every reply against it -- the Python SDK's does,
    with jsonschema, whose cost grows with each subschema it enters: a recall of five hits checks
    in 0.39 ms instead of 0.67 ms here (benchmarks/README.md, the idle recall floor)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        own = handler.resolve_ref_schema(schema)
        for name, field in own.get("properties", {}).items():
            own["properties"][name] = _plain(field, handler)
        return schema


def _plain(field: dict[str, Any], handler: GetJsonSchemaHandler) -> dict[str, Any]:
    """One property's schema with `anyOf [T, null]` as `type [T, null]` and a list of records inline."""
    options = field.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(option for option in options if option != {"type": "null"})
        if set(other) == {"type"} and isinstance(other["type"], str):
            field = {key: value for key, value in field.items() if key != "anyOf"} | {"type": [other["type"], "null"]}
    items = field.get("items")
    if isinstance(items, dict) and "$ref" in items:
        field = field | {"items": dict(handler.resolve_ref_schema(items))}
    return field


class JobOut(ToolOut):
    job_id: str
    status: Literal["queued", "done", "failed"]
    namespace: str
    decision: str | None = Field(
        None, description="Once done: created, occurrence, skipped, updated, consolidated, appended or forgotten"
    )
    memory_id: str | None = Field(
        None, description="The memory the fact is in, once done (none if it was forgotten before it was curated)"
    )
    error: str | None = None
    note: str | None = Field(
        None,
        description="Once done: what curation could not do as asked, e.g. a memory named in supersedes that "
        "another fact superseded first (it is left as it is)",
    )
    created_at: str
    occurred_at: str | None = None
    expires_at: str | None = Field(None, description="From when the fact is no longer recalled, if it expires")
    expired: bool = Field(
        False, description="Past its expires_at already: recall and list leave it out unless include_expired is set"
    )
    supersedes: list[str] = Field([], description="Memories this fact replaces once curated")
    source_job_id: str | None = Field(None, description="The memwal_analyze request the fact was extracted from")
    extracted: list[str] | None = Field(
        None,
        description="For a memwal_analyze request (which becomes no memory itself): the facts extracted from it "
        "that stay remembered (memory ids; job ids of those still queued)",
    )

    memory_expires_at: str | None = Field(
        None,
        description="Once done: from when the memory the fact is in is no longer recalled, if it expires. A repeat "
        "or merge keeps the later expiry of the two, and none when either has none, so it can differ from expires_at",
    )
    memory_expired: bool = Field(False, description="Once done: the memory the fact is in is past its expiry")
    curated_here: bool = Field(
        True,
        description="False when this server runs no curation worker (serve --no-worker): a queued job is "
        "curated once a server with one runs on this database",
    )

    @classmethod
    def of(
        cls,
        job: Job,
        extracted: Sequence[str] | None = None,
        memory: MemoryNow | None = None,
        curated_here: bool = True,
    ) -> JobOut:
        """`memory`: what the job's memory holds now; without it (not read, or gone), the job's own expiry."""
        memory_expires_at = None if job.status != "done" else job.expires_at if memory is None else memory.expires_at
        return cls(
            curated_here=curated_here,
            extracted=list(extracted) if extracted is not None else None,
            memory_expires_at=_given(memory_expires_at),
            memory_expired=_expired(memory_expires_at),
            occurred_at=_given(job.occurred_at),
            expires_at=_given(job.expires_at),
            expired=_expired(job.expires_at),
            supersedes=list(job.supersedes),
            source_job_id=job.source_job_id,
            job_id=job.id,
            status=job.status,
            namespace=job.namespace,
            decision=job.decision,
            memory_id=job.memory_id,
            error=job.error if job.status == "failed" else None,
            # A done job's error column holds what it could not do (store mark_done).
            note=job.error if job.status == "done" else None,
            created_at=_iso(job.created_at),
        )


def _given(ts: float | None) -> str | None:
    """An instant a caller gives (occurred_at, expires_at), to the millisecond: "14:05:09.5Z"
    is shown as it was given. The times the server stamps (created_at, updated_at) are shown
    to the second."""
    return _iso(ts, millis=True) if ts is not None else None


def _expired(expires_at: float | None) -> bool:
    return expires_at is not None and expires_at <= time.time()


def _marks(expires_at: str | None, expired: bool, superseded_by: str | None = None) -> str:
    """The marks recall puts on a fact ([expires D], [expired D], [superseded by m_...]), for a
    record whose expires_at is shown as _iso showed it."""
    try:
        seconds = datetime.fromisoformat(expires_at).timestamp() if expires_at is not None else None
    except ValueError:  # a time _iso could not show: its marks cannot name a day either
        seconds = None
    marks = expiry_mark(seconds, expired)
    return marks + superseded_mark(superseded_by)


class RememberOut(JobOut):
    replayed: bool = Field(description="True when this idempotency key already had a job; it is returned")

    @classmethod
    def of_outcome(cls, outcome: RememberOutcome) -> RememberOut:
        job = JobOut.of(outcome.job, memory=outcome.memory, curated_here=outcome.curated_here)
        return cls(**job.model_dump(), replayed=outcome.replayed)


def remember_line(out: RememberOut) -> str:
    """The reply to one remember, the same from the tool and the CLI: a replay says it is one."""
    prefix = "Already remembered (same idempotency key): " if out.replayed else "Remembered: "
    return prefix + job_line(out)


class RememberItem(BaseModel):
    """One fact of memwal_remember_many, with memwal_remember's arguments (bar wait_ms)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(description="The fact to keep, self-contained")
    namespace: str | None = Field(None, description="Partition inside your memory (default 'default')")
    idempotency_key: str | None = Field(None, description="Send the same key when retrying, so it is stored once")
    occurred_at: str | None = Field(None, description="When the fact happened, ISO-8601, if not now")
    expires_at: str | None = Field(
        None, description="When the fact stops being true, ISO-8601 (a date alone: the end of that day, UTC)"
    )
    supersedes: list[str] | None = Field(
        None, description="Ids of memories this fact replaces (each named by one item at most)"
    )


class RememberManyOut(ToolOut):
    jobs: list[RememberOut] = Field(description="One per item, in the order of the items")


def remember_many_text(out: RememberManyOut) -> str:
    lines = [f"Remembered {counted(len(out.jobs), 'fact')}:"]
    for number, job in enumerate(out.jobs):
        again = " (already remembered: same idempotency key)" if job.replayed else ""
        lines.append(f"[{number}] {job_line(job)}{again}")
    return "\n".join(lines)


class FactOut(RememberOut):
    text: str = Field(description="The fact as it was remembered")


class AnalyzeOut(ToolOut):
    extraction_failed: bool = Field(description="True: the LLM gave no usable facts; the source was remembered whole")
    error: str | None = Field(None, description="Why extraction failed")
    request_id: str | None = Field(
        None,
        description="The analyze request holding the source text in the journal (forget it to erase the text); "
        "each fact's source_job_id names it",
    )
    facts: list[FactOut] = Field(description="The facts filed (or, on failure, the source as one fact)")
    left_out: int = Field(0, description="Facts beyond the limit of 50 per call, not remembered")
    refused: int = Field(
        0, description="Facts the LLM returned that are no valid text (a number, null, empty, too long, ...)"
    )
    refusals: list[str] = Field([], description="Why each refused fact was refused, in the LLM's order")
    repeated: int = Field(0, description="Facts the LLM returned more than once (remembered once)")

    @classmethod
    def of(cls, outcome: AnalyzeOutcome) -> AnalyzeOut:
        return cls(
            extraction_failed=outcome.error is not None,
            error=outcome.error,
            request_id=outcome.request.id if outcome.request is not None else None,
            facts=[FactOut(**RememberOut.of_outcome(fact).model_dump(), text=fact.job.text) for fact in outcome.facts],
            left_out=outcome.left_out,
            refused=outcome.refused,
            refusals=list(outcome.refusals),
            repeated=outcome.repeated,
        )


def analyze_text(out: AnalyzeOut) -> str:
    if out.extraction_failed:
        lines = [f"Fact extraction failed ({out.error}); the text was remembered whole, as one fact:"]
    elif not out.facts:
        lines = [
            f"The LLM found no fact worth keeping. The text is kept only as analyze request {out.request_id} "
            "(forget it to erase the text)."
        ]
    else:
        lines = [f"Extracted {counted(len(out.facts), 'fact')} from analyze request {out.request_id}:"]
    for fact in out.facts:
        lines.append(f"- {job_line(fact)}: {fact.text}")
    notes = [
        (out.left_out, "more fact", f"left out: at most {MAX_FACTS} are kept per call"),
        (out.repeated, "repeated fact", "remembered once"),
    ]
    lines += [f"({counted(n, noun)} {agree(n, 'was', 'were')} {what}.)" for n, noun, what in notes if n]
    if out.refused:
        lines.append(f"{counted(out.refused, 'fact')} {agree(out.refused, 'was', 'were')} refused and not remembered:")
        lines += _some(out.refusals)
    return "\n".join(lines)


def _some(reasons: list[str], most: int = 5) -> list[str]:
    """The first few reasons, one a line (a reason may hold a semicolon of its own), and how many more (a
    model can return hundreds of bad items)."""
    shown = [f"  - {reason}" for reason in reasons[:most]]
    return shown + ([f"  - and {len(reasons) - most} more"] if len(reasons) > most else [])


class StatusOut(ToolOut):
    jobs: list[JobOut]


class HitOut(ToolOut):
    id: str = Field(description="Memory id (a job id for a fact still being curated)")
    text: str
    score: float = Field(description="Relevance in [0, 1]: vector and full-text similarity combined")
    namespace: str
    created_at: str
    updated_at: str
    occurred_at: str | None = Field(None, description="When it happened, if the rememberer said so")
    copies: int = Field(
        description="Other copies of this fact folded into this hit, over everything stored in the searched "
        "namespaces (within since/until): the same normalized text stored or remembered again, plus folded_by_llm"
    )
    folded_by_llm: int = Field(
        0, description="Of copies, similar facts the curation model folded into this one as adding nothing (SKIP)"
    )
    pending: bool = Field(False, description="Remembered but not curated yet")
    expires_at: str | None = Field(None, description="From when it is no longer recalled, if it expires")
    expired: bool = Field(False, description="Past its expires_at (returned because include_expired was set)")
    superseded_by: str | None = Field(
        None,
        description="The memory that replaced this one, or the queued remember job (j_...) replacing it, "
        "not curated yet (returned because include_superseded was set)",
    )
    collapsed_ids: list[str] = Field(
        [], description="Ids of the other stored memories with the same normalized text, folded into this hit"
    )

    @classmethod
    def of(cls, hit: Hit) -> HitOut:
        return cls(
            id=hit.id,
            text=hit.text,
            score=round(hit.score, 4),
            namespace=hit.namespace,
            created_at=_iso(hit.created_at),
            updated_at=_iso(hit.updated_at),
            occurred_at=_given(hit.occurred_at),
            copies=hit.copies,
            folded_by_llm=hit.folded_by_llm,
            pending=hit.pending,
            expires_at=_given(hit.expires_at),
            expired=hit.expired(time.time()),
            superseded_by=hit.superseded_by,
            collapsed_ids=list(hit.collapsed_ids),
        )


class RecallOut(ToolOut):
    query: str
    limit: int
    namespace: str
    collapsed: int = Field(description="Copies folded across all hits (the sum of their copies)")
    hits: list[HitOut]
    omitted: int = Field(0, description="Relevant hits left out to keep the reply within max_chars")

    @classmethod
    def of(cls, result: RecallResult) -> RecallOut:
        return cls(
            query=result.query,
            limit=result.limit,
            namespace=result.namespace,
            collapsed=result.collapsed,
            hits=[HitOut.of(hit) for hit in result.hits],
            omitted=result.omitted,
        )


class RevisionOut(ToolOut):
    body: str = Field(description="The body the memory had before this change")
    replaced_by: str = Field(description="What replaced it: updated / consolidated / appended")
    job_id: str | None
    llm_model: str | None
    guard: str | None = Field(description="MergeGuard outcome and figures")
    merged_ids: list[str] = Field(description="Memories folded into this one by the change")
    created_at: str


class HistoryOut(ToolOut):
    memory_id: str
    namespace: str
    body: str
    status: str = Field(
        description="live, retired (folded into `retired_into`), superseded (replaced by `superseded_by`) or forgotten"
    )
    retired_into: str | None
    created_at: str
    updated_at: str
    revisions: list[RevisionOut] = Field(description="Previous bodies, newest first")
    jobs: list[JobOut] = Field(description="Remember jobs that ended in this memory, newest first")
    merged_from: list[str]
    expires_at: str | None = Field(None, description="From when it is no longer recalled or listed, if it expires")
    expired: bool = Field(
        False, description="Past its expires_at: recall and list leave it out without include_expired"
    )
    superseded_by: str | None = Field(None, description="The memory that replaced this one")
    supersedes: list[str] = Field([], description="Memories this one replaced (undo brings them back)")
    superseded_by_status: str | None = Field(
        None, description="Status of the memory that replaced this one (forgotten: it stays only until purged)"
    )
    superseded_by_next: str | None = Field(
        None,
        description="Where the replacement went when it is no longer live: the memory that superseded it "
        "(superseded) or that it was folded into (retired)",
    )
    superseded_by_expires_at: str | None = Field(None, description="The replacement's expiry, if it expires")
    superseded_by_expired: bool = Field(False, description="The replacement is past its expires_at")
    undo_restores: bool = Field(
        False,
        description="True: memwal-mcp undo <superseded_by> brings this memory back (that supersede is its last change)",
    )
    being_replaced_by: str | None = Field(
        None,
        description="A queued remember job (j_...) that supersedes this live memory: recall and list leave it out "
        "already; forgetting that job brings it back",
    )

    @classmethod
    def of(cls, history: History) -> HistoryOut:
        return cls(
            memory_id=history.memory_id,
            namespace=history.namespace,
            body=history.body,
            status=history.status,
            retired_into=history.retired_into,
            created_at=_iso(history.created_at),
            updated_at=_iso(history.updated_at),
            revisions=[
                RevisionOut(
                    body=r.body,
                    replaced_by=r.decision,
                    job_id=r.job_id,
                    llm_model=r.llm_model,
                    guard=r.guard,
                    merged_ids=list(r.merged_ids),
                    created_at=_iso(r.created_at),
                )
                for r in history.revisions
            ],
            jobs=[
                JobOut.of(job, memory=MemoryNow(history.expires_at) if job.memory_id == history.memory_id else None)
                for job in history.jobs
            ],
            merged_from=history.merged_from,
            expires_at=_given(history.expires_at),
            expired=_expired(history.expires_at),
            superseded_by=history.superseded_by,
            supersedes=history.supersedes,
            superseded_by_status=history.superseded_by_status,
            superseded_by_next=history.superseded_by_next,
            superseded_by_expires_at=_given(history.superseded_by_expires_at),
            superseded_by_expired=_expired(history.superseded_by_expires_at),
            undo_restores=history.undo_restores,
            being_replaced_by=history.being_replaced_by,
        )


def _replacement_since(out: HistoryOut) -> str:
    """What became of the replacement, so the line says why an undo is not offered (or that it is)."""
    if out.undo_restores:
        return f" (memwal-mcp undo {out.superseded_by} brings it back)"
    status, next_id = out.superseded_by_status, out.superseded_by_next
    if status == "superseded":
        return f", itself superseded since by {next_id}" if next_id else ", itself superseded since"
    if status == "retired":
        return f", itself folded into {next_id} since" if next_id else ", itself folded into another memory since"
    if status == "forgotten":
        return ", itself forgotten since (it stays only until purged)"
    if status == "live" and out.superseded_by_expired:
        return f", itself expired since {out.superseded_by_expires_at}"
    if status not in (None, "live"):
        return f", itself {status} since"
    return ""


def history_text(out: HistoryOut) -> str:
    gone = out.status == "forgotten"  # its text is erased: no expiry to tell, nothing kept to include
    marks = "" if gone else _marks(out.expires_at, out.expired)
    lines = [f"{out.memory_id} [{out.status}]{marks}" + (f" {out.body}" if out.body else "")]
    if out.retired_into:
        lines.append(f"folded into {out.retired_into}")
    if out.superseded_by:
        # Offer the undo only where it works: not when the replacement is gone or changed since.
        lines.append(f"superseded by {out.superseded_by}{_replacement_since(out)}")
    if out.being_replaced_by:
        by = out.being_replaced_by
        lines.append(f"being replaced by queued job {by}: recall and list leave it out (forget {by} to keep it)")
    if out.supersedes:
        lines.append(f"supersedes {', '.join(out.supersedes)}")
    if out.expires_at and not gone:
        past = "left" if out.expired else "leaves"
        lines.append(f"{past} recall and list at {out.expires_at} (it is kept; include_expired shows it)")
    for r in out.revisions:
        if r.replaced_by in ("superseded", "unsuperseded"):
            what = "superseded" if r.replaced_by == "superseded" else "brought back"
            lines.append(f"- {r.created_at} {what} {', '.join(r.merged_ids)} (job {r.job_id})")
        else:
            lines.append(f"- {r.created_at} {r.replaced_by} by job {r.job_id}; before: {r.body}")
    for job in out.jobs:
        source = f", extracted from analyze request {job.source_job_id}" if job.source_job_id else ""
        note = f"; {job.note}" if job.note else ""
        marks = _marks(job.expires_at, job.expired)
        lines.append(f"- {job.created_at} job {job.job_id} ({job.decision or job.status}{source}{note}){marks}")
    return "\n".join(lines)


class ForgetOut(ToolOut):
    memory_id: str
    erased_memories: list[str] = Field(description="The memory and any memories merged into it")
    erased_jobs: int = Field(description="Remember jobs whose text was erased")
    already_forgotten: bool = Field(
        default=False, description="True: it had been forgotten before; nothing was erased this time"
    )
    job_id: str | None = Field(
        default=None,
        description="The remember job the fact was named by (a queued hit's id): erased_memories is empty if it "
        "was still queued, else holds the memory it became",
    )
    live_again: list[str] = Field(
        default=[],
        description="Memories the erased one had superseded, live again (as an undo of the supersede would "
        "bring them back): recall finds them, forget them too if they should go",
    )
    back_expired: list[str] = Field(
        default=[],
        description="Memories the erased one had superseded that are past their expiry: no longer superseded, "
        "but expired, so recall and list still leave them out (include_expired shows them; purge --expired "
        "erases them)",
    )
    extracted: list[str] | None = Field(
        default=None,
        description="Set when memory_id named an analyze request (j_...), whose source text is what was erased: "
        "the facts extracted from it, which stay remembered (memory ids; job ids of facts still queued)",
    )
    source_requests: list[str] = Field(
        default=[],
        description="The analyze requests the erased fact was extracted from: they still hold the source text "
        "it was in; forget a request (its j_... id) to erase that too",
    )
    wal_cleared: bool = Field(
        description="True: on SQLite no file of the database holds the text any more; on PostgreSQL its old row "
        "versions are VACUUMed (see disk_copies). False: the text is erased from the tables, but another "
        "connection holding an older snapshot keeps copies in the database's files (on SQLite the database "
        "file itself and its -wal) until its transaction ends; memwal-mcp keeps retrying and the reply text "
        "names the files"
    )
    disk_copies: str | None = Field(
        default=None,
        description="Set on PostgreSQL: whether VACUUM removed the old row versions (as wal_cleared says, naming "
        "the transaction that keeps them), then that PostgreSQL does not overwrite the space VACUUM frees, so copies "
        "of the bytes may remain on the server's disk until reused, and what an operator can do. Unset on SQLite",
    )

    @classmethod
    def of(cls, outcome: ForgetOutcome) -> ForgetOut:
        return cls(
            memory_id=outcome.memory_id,
            erased_memories=list(outcome.erased_memories),
            erased_jobs=outcome.erased_jobs,
            wal_cleared=outcome.wal_cleared,
            already_forgotten=outcome.already,
            job_id=outcome.job_id,
            live_again=list(outcome.restored),
            back_expired=list(outcome.expired_back),
            extracted=list(outcome.extracted) if outcome.extracted is not None else None,
            source_requests=list(outcome.sources),
            disk_copies=outcome.disk_copies,
        )

    def summary(self) -> str:
        """One line for people, said the same way by the tool and the CLI; on PostgreSQL it ends
        with what stays on the server's disk, so no reply claims the bytes gone from every file."""
        said = self._done()
        return f"{said}; {self.disk_copies}" if self.disk_copies else said

    def _done(self) -> str:
        if self.already_forgotten:
            return f"{self.memory_id} was already forgotten; nothing more was erased"
        if self.extracted is not None:
            return f"forgot the source text of analyze request {self.job_id}; {_facts_kept(self.extracted)}"
        jobs = f"{counted(self.erased_jobs, 'remember job')} erased"
        sources = f"; {sources_note(self.source_requests)}" if self.source_requests else ""
        back = ""
        if self.live_again:
            back = f"; {', '.join(self.live_again)}, which it superseded, {agree(len(self.live_again), 'is', 'are')}"
            back += " live again"
        if self.back_expired:
            named, n = ", ".join(self.back_expired), len(self.back_expired)
            back += (
                f"; {named}, which it superseded, {agree(n, 'is', 'are')} no longer superseded but"
                f" {agree(n, 'has', 'have')} expired: recall leaves {agree(n, 'it', 'them')} out"
                " (include_expired shows expired memories)"
            )
        if self.job_id is not None and not self.erased_memories:
            return f"forgot queued fact {self.job_id} before it was curated ({jobs}){back}{sources}"
        became = f" (the memory remember job {self.job_id} became)" if self.job_id is not None else ""
        merged = len(self.erased_memories) - 1
        folded = f"{counted(merged, 'memory')} merged into it and " if merged > 0 else ""
        return f"forgot {self.memory_id}{became} ({folded}{jobs}){back}{sources}"


class UndoOut(ToolOut):
    memory_id: str
    body: str = Field(description="The memory's body now (a supersede and its redo leave it as it was)")
    restored: list[str] = Field(
        default=[],
        description="Memories live again on their own: what the undone merge folded in or supersede replaced",
    )
    superseded_again: list[str] = Field(
        default=[], description="A redo of a supersede: the memories replaced by memory_id again, out of recall"
    )
    folded_again: list[str] = Field(
        default=[], description="A redo of a merge: the memories folded into memory_id again, out of recall"
    )

    @classmethod
    def of(cls, outcome: UndoOutcome) -> UndoOut:
        return cls(
            memory_id=outcome.memory_id,
            body=outcome.body,
            restored=outcome.restored,
            superseded_again=outcome.superseded_again,
            folded_again=outcome.folded_again,
        )

    def summary(self) -> str:
        """What the undo did, as the CLI says it: a redo that retires
        memories again names them, never only the body it left unchanged."""
        mid = self.memory_id
        if self.superseded_again:
            named = ", ".join(self.superseded_again)
            left = agree(len(self.superseded_again), "leaves", "leave")
            return f"{named} superseded again by {mid}: {named} {left} recall; {mid} is unchanged: {self.body}"
        text = f"{mid} is back to: {self.body}"
        if self.folded_again:
            named = ", ".join(self.folded_again)
            text += f"\nfolded in again (out of recall, merged into {mid}): {named}"
        if self.restored:
            text += "\nrestored: " + ", ".join(self.restored)
        return text


def sources_note(request_ids: list[str]) -> str:
    """What forgetting an extracted fact leaves: the analyze requests whose source text it was
    in, and how to erase that too (the reverse of _facts_kept)."""
    if len(request_ids) == 1:
        (rid,) = request_ids
        return f"its text may still be in the source text of analyze request {rid}: forget {rid} to erase that too"
    return (
        f"its text may still be in the source texts of analyze requests {', '.join(request_ids)}: "
        "forget each to erase them too"
    )


def _facts_kept(ids: list[str], most: int = 10) -> str:
    """What forgetting an analyze request left: the facts extracted from it, each named (the
    first `most` of them) or counted."""
    if not ids:
        return "no fact extracted from it is remembered"
    named = ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")
    if len(ids) == 1:
        return f"the fact extracted from it stays remembered ({named})"
    return f"the {len(ids)} facts extracted from it stay remembered ({named})"


def erasure_kept(where: str) -> str:
    """Said by every entry point whose forget could not clear every copy in time (`where`: the
    store's erasure_kept): the README promises no file keeps the text, so a reply must not claim
    that while one still does, and must name the files that do."""
    return f"the text is erased from the database's tables, but {where}"


class MemoryOut(ToolOut):
    id: str
    text: str
    namespace: str
    created_at: str
    updated_at: str
    occurred_at: str | None
    occurrences: int = Field(description="Times the same fact was remembered again")
    expires_at: str | None = None
    expired: bool = Field(False, description="Past its expires_at (listed because include_expired was set)")
    superseded_by: str | None = Field(
        None,
        description="Set when include_superseded listed a replaced memory: the memory that replaced it, or "
        "the queued remember job (j_...) replacing it",
    )


class ListOut(ToolOut):
    memories: list[MemoryOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end")

    @classmethod
    def of(cls, page: MemoryPage) -> ListOut:
        now = time.time()
        return cls(
            memories=[
                MemoryOut(
                    id=m.id,
                    text=m.text,
                    namespace=m.namespace,
                    created_at=_iso(m.created_at),
                    updated_at=_iso(m.updated_at),
                    occurred_at=_given(m.occurred_at),
                    occurrences=m.occurrences,
                    expires_at=_given(m.expires_at),
                    expired=m.expires_at is not None and m.expires_at <= now,
                    superseded_by=m.superseded_by,
                )
                for m in page.items
            ],
            next_cursor=page.next_cursor,
        )


def list_text(out: ListOut) -> str:
    if not out.memories:
        return "No memories."
    lines = [
        f"{m.id} [{(m.occurred_at if m.occurred_at is not None else m.created_at)[:10]}] ({m.namespace})"
        f"{_marks(m.expires_at, m.expired, m.superseded_by)} {m.text}"
        for m in out.memories
    ]
    if out.next_cursor:
        lines.append(f"(more: cursor={out.next_cursor})")
    return "\n".join(lines)


def _facts(job: JobOut) -> str:
    return f": {', '.join(job.extracted)}" if job.extracted else ""


def job_line(job: JobOut) -> str:
    """One line per job, with its expiry marked as recall marks it and, when that is already
    past, what it means for the fact: a past expires_at is accepted, but never silently."""
    if job.status == "done" and job.memory_id is None:
        if job.decision == ANALYZED:
            return f"{job.job_id}: analyze request (holds the source text; its facts name it{_facts(job)})"
        if job.decision == "forgotten" and job.extracted is not None:
            kept = (
                f"its {counted(len(job.extracted), 'fact')} {agree(len(job.extracted), 'stays', 'stay')}"
                f" ({', '.join(job.extracted)})"
                if job.extracted
                else "the facts extracted from it were forgotten too"
            )
            return f"analyze request {job.job_id}: its source text was forgotten; {kept}"
        if job.decision == "forgotten":  # erased by a forget while still queued: it never became a memory
            return f"{job.job_id}: forgotten before it was curated (its text is erased; it became no memory)"
        line = f"{job.job_id}: done ({job.decision}) but in no memory (`memwal-mcp check` names the damage)"
    elif job.status == "done":
        note = f"; {job.note}" if job.note else ""
        line = f"{job.job_id}: done ({job.decision}) -> memory {job.memory_id}{note}"
        line += _marks(job.memory_expires_at, job.memory_expired)
        if job.memory_expires_at != job.expires_at:
            return line + _own_expiry(job)
        return line + (_ALREADY_EXPIRED if job.expired else "")
    elif job.status == "failed":
        line = f"{job.job_id}: failed: {job.error}"
    else:
        curated = (
            "being curated" if job.curated_here else "no curation worker runs in this server; curated when one runs"
        )
        line = f"{job.job_id}: queued ({curated}{'' if job.expired else '; recall already sees it'})"
    return line + _marks(job.expires_at, job.expired) + (_ALREADY_EXPIRED if job.expired else "")


_ALREADY_EXPIRED = " (already expired: recall and list leave it out unless include_expired is set)"


def _own_expiry(job: JobOut) -> str:
    """A done job's own expiry, when the memory it went into has another (the memory's is what holds)."""
    if job.expires_at is None:
        return " (the memory's expiry; this fact gave none)"
    own = _day(job.expires_at)
    if job.memory_expires_at is None:
        return f" (the memory does not expire; this fact's own expiry, {own}, does not shorten it)"
    # The same format throughout (_iso), so the strings order as the instants do.
    later = "later expiry is kept" if job.memory_expires_at > job.expires_at else "expiry holds"
    return f" (the memory's {later}; this fact's own was {own})"


def _day(expires_at: str) -> str:
    """The last day a fact with this expiry holds, as its mark names it."""
    try:
        return last_day(datetime.fromisoformat(expires_at).timestamp())
    except ValueError:  # a time _iso could not show
        return expires_at


# --- the server ----------------------------------------------------------------
