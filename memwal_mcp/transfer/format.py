"""The memwal export format (JSON Lines, versioned) and telling input files apart.

Documented in docs/export-format.md. Line 1 is a header; every other line is one
record whose `type` says what it is. Version rules: a reader accepts any file whose
`version` is at most its own; new optional fields may appear within a version (a
reader ignores fields it does not know); a new record type, a removed field or a
changed meaning takes a new version.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Generator
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from ..config import OwnerName
from ..errors import ImportFormatError
from ..records import Job
from ..store.records import KINDS, ImportRow, Kind, LaneRow, MemoryRecord, RevisionRow, TombstoneRow
from ..validation import EARLIEST_EPOCH_S, LATEST_EPOCH_S

FORMAT = "memwal-export"
# 2: jobs carry expires_at, supersedes and source_job_id (and an analyze request is a job decided
# 'analyzed'); memories carry expires_at and superseded_by. A version-1 file has none of them.
VERSION = 2

InputKind = Literal["memwal", "memory-json", "text"]

# Public ids as memwal-mcp makes them ('m_…', 'j_…'); anything id-like is accepted.
Id = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")]
Owner = OwnerName  # the one owner rule, as for config and tokens
Namespace = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$")]


def _on_the_calendar(seconds: float) -> float:
    """A time every reader can show as an ISO-8601 date again, as an argument's date must be."""
    if not EARLIEST_EPOCH_S <= seconds <= LATEST_EPOCH_S:
        raise PydanticCustomError(
            "time_off_calendar",
            "{seconds} seconds since the epoch is outside the years 0001 to 9999 in UTC"
            f" (from {EARLIEST_EPOCH_S:.0f} to {LATEST_EPOCH_S!r})",
            {"seconds": seconds},
        )
    return seconds


def _not_a_truth_value(value: object) -> object:
    """JSON true/false is no time: lax validation would read it as 1 or 0 seconds (1970)."""
    if isinstance(value, bool):
        shown = "true" if value else "false"
        raise PydanticCustomError("time_not_bool", f"a time must be a number of seconds, not {shown}")
    return value


Time = Annotated[
    float,
    BeforeValidator(_not_a_truth_value),
    AfterValidator(_on_the_calendar),
    Field(description="seconds since the Unix epoch, UTC"),
]


class _Record(BaseModel):
    # NaN and infinity are valid JSON to Python but no time: refused like any malformed value.
    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False)


class Header(_Record):
    type: Literal["header"] = "header"
    format: Literal["memwal-export"] = "memwal-export"
    version: int = VERSION
    exported_at: Time
    generator: str = ""
    owners: list[Owner]
    counts: dict[Kind, int] | None = None
    vector_model: str | None = None


class LaneLine(_Record):
    type: Literal["lane"] = "lane"
    owner: Owner
    namespace: Namespace

    def row(self) -> LaneRow:
        return LaneRow(self.owner, self.namespace)


class JobLine(_Record):
    type: Literal["job"] = "job"
    id: Id
    owner: Owner
    namespace: Namespace
    text: str
    idempotency_key: str | None = Field(None, max_length=256)
    status: Literal["queued", "done", "failed"]
    attempts: int = Field(0, ge=0)
    decision: str | None = None
    memory_id: Id | None = None
    error: str | None = None
    occurred_at: Time | None = None
    created_at: Time
    updated_at: Time
    expires_at: Time | None = None
    supersedes: list[Id] = []
    source_job_id: Id | None = None

    @classmethod
    def of(cls, job: Job) -> JobLine:
        return cls(
            id=job.id,
            owner=job.owner,
            namespace=job.namespace,
            text=job.text,
            idempotency_key=job.idempotency_key,
            status=job.status,
            attempts=job.attempts,
            decision=job.decision,
            memory_id=job.memory_id,
            error=job.error,
            occurred_at=job.occurred_at,
            created_at=job.created_at,
            updated_at=job.updated_at,
            expires_at=job.expires_at,
            supersedes=list(job.supersedes),
            source_job_id=job.source_job_id,
        )

    def row(self) -> Job:
        return Job(
            self.id,
            self.owner,
            self.namespace,
            self.text,
            self.idempotency_key,
            self.status,
            self.attempts,
            self.decision,
            self.memory_id,
            self.error,
            self.created_at,
            self.updated_at,
            self.occurred_at,
            self.expires_at,
            tuple(self.supersedes),
            self.source_job_id,
        )


class MemoryLine(_Record):
    type: Literal["memory"] = "memory"
    id: Id
    owner: Owner
    namespace: Namespace
    body: str = Field(min_length=1)
    status: Literal["live", "retired"]
    retired_into: Id | None = None
    source_job_id: Id
    occurrences: int = Field(0, ge=0)
    occurred_at: Time | None = None
    created_at: Time
    updated_at: Time
    expires_at: Time | None = None
    superseded_by: Id | None = None  # a retired memory replaced by this one (retired_into is then null)

    @classmethod
    def of(cls, memory: MemoryRecord) -> MemoryLine:
        return cls(**{name: getattr(memory, name) for name in MemoryRecord.__slots__})

    def row(self) -> MemoryRecord:
        return MemoryRecord(**self.model_dump(exclude={"type"}))


class RevisionLine(_Record):
    type: Literal["revision"] = "revision"
    owner: Owner
    memory_id: Id
    body: str
    decision: str
    job_id: Id | None = None
    llm_model: str | None = None
    guard: str | None = None
    merged_ids: list[Id] = []
    created_at: Time
    expires_at: Time | None = None  # the memory's expiry while this was its body (added within version 2)

    @classmethod
    def of(cls, revision: RevisionRow) -> RevisionLine:
        fields = {name: getattr(revision, name) for name in RevisionRow.__slots__}
        return cls(**{**fields, "merged_ids": list(revision.merged_ids)})

    def row(self) -> RevisionRow:
        fields = self.model_dump(exclude={"type"})
        return RevisionRow(**{**fields, "merged_ids": tuple(self.merged_ids)})


class TombstoneLine(_Record):
    """A forgotten memory: that it existed, whose it was, and when it was forgotten. Never its text.

    The optional fields after `forgotten_at` (added within version 1) are the emptied memory's
    bookkeeping, so the importing store can keep the row its erased jobs and history name.
    """

    type: Literal["tombstone"] = "tombstone"
    memory_id: Id
    owner: Owner
    namespace: Namespace
    jobs: int = Field(0, ge=0)
    forgotten_at: Time
    source_job_id: Id | None = None
    retired_into: Id | None = None
    occurred_at: Time | None = None
    created_at: Time | None = None
    updated_at: Time | None = None

    @classmethod
    def of(cls, tombstone: TombstoneRow) -> TombstoneLine:
        return cls(**{name: getattr(tombstone, name) for name in TombstoneRow.__slots__})

    def row(self) -> TombstoneRow:
        return TombstoneRow(**self.model_dump(exclude={"type"}))


Record = Annotated[LaneLine | JobLine | MemoryLine | RevisionLine | TombstoneLine, Field(discriminator="type")]
_RECORD = TypeAdapter(Record)

# --- the official MCP memory server's memory.json (JSON Lines) -------------


class Entity(_Record):
    type: Literal["entity"]
    name: str = Field(min_length=1)
    entityType: str = ""
    observations: list[str] = []

    def text(self) -> str:
        head = f"{self.name} ({self.entityType})" if self.entityType.strip() else self.name
        observations = [o.strip() for o in self.observations if o.strip()]
        return "\n".join([head, *(f"- {o}" for o in observations)])


class Relation(_Record):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    type: Literal["relation"]
    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    relationType: str = Field(min_length=1)

    def text(self) -> str:
        return f"{self.source} {self.relationType} {self.target}"


GraphItem = Annotated[Entity | Relation, Field(discriminator="type")]
_GRAPH_ITEM = TypeAdapter(GraphItem)


# --- parsing with line numbers ---------------------------------------------


def _problem(exc: ValidationError, tag: object = None) -> str:
    first = exc.errors()[0]
    loc = first["loc"][1:] if first["loc"][:1] == (tag,) else first["loc"]  # a union's tag leads the path
    where = ".".join(str(part) for part in loc)
    return f"{where}: {first['msg']}" if where else first["msg"]


def _unencodable(value: object, where: str = "") -> str | None:
    """Where in a parsed JSON value a string holds a lone surrogate (a `\\ud800` escape), which
    no UTF-8 store can keep; None when there is none."""
    if isinstance(value, str):
        return where or "value" if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _unencodable(key) is not None:
            return f"{where}.{key!r}" if where else repr(key)
        found = _unencodable(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _load(path: Path, line_no: int, line: str) -> dict:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}, line {line_no}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ImportFormatError(f"{path}, line {line_no}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise ImportFormatError(f"{path}, line {line_no}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ImportFormatError(f"{path}, line {line_no}: expected a JSON object, found {type(value).__name__}")
    where = _unencodable(value)
    if where is not None:
        raise ImportFormatError(f"{path}, line {line_no}: {where}: not valid Unicode (a lone surrogate escape)")
    return value


def parse_header(path: Path, line: str) -> Header:
    value = _load(path, 1, line)
    if value.get("type") != "header" or value.get("format") != FORMAT:
        raise ImportFormatError(f"{path}, line 1: not a memwal export header")
    version = value.get("version")
    if isinstance(version, int) and version > VERSION:
        raise ImportFormatError(
            f"{path} is a memwal export of version {version}; this memwal-mcp reads up to version {VERSION}. "
            "Upgrade memwal-mcp to import it."
        )
    try:
        return Header.model_validate(value)
    except ValidationError as exc:
        raise ImportFormatError(f"{path}, line 1: bad header: {_problem(exc)}") from None


def parse_record(path: Path, line_no: int, line: str) -> ImportRow:
    value = _load(path, line_no, line)
    kind = value.get("type")
    if kind not in KINDS:
        raise ImportFormatError(
            f"{path}, line {line_no}: unknown record type {kind!r} (expected one of {', '.join(KINDS)})"
        )
    try:
        return _RECORD.validate_python(value).row()
    except ValidationError as exc:
        raise ImportFormatError(f"{path}, line {line_no}: bad {kind} record: {_problem(exc, kind)}") from None


def parse_graph_item(path: Path, line_no: int, line: str) -> Entity | Relation:
    value = _load(path, line_no, line)
    if value.get("type") not in ("entity", "relation"):
        raise ImportFormatError(
            f"{path}, line {line_no}: expected an entity or a relation, found type {value.get('type')!r}"
        )
    try:
        return _GRAPH_ITEM.validate_python(value)
    except ValidationError as exc:
        raise ImportFormatError(
            f"{path}, line {line_no}: bad {value['type']}: {_problem(exc, value['type'])}"
        ) from None


def dump(record: BaseModel) -> str:
    """One line of JSON (no newline), fields in declaration order, floats exact."""
    return record.model_dump_json()


# --- what kind of file is this? --------------------------------------------

_JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}


def detect_kind(path: Path) -> InputKind:
    """By the first non-empty line: a memwal header, a memory.json entity/relation, else text.

    A .json/.jsonl file that is neither is refused rather than imported as prose.
    """
    first = next((line.strip() for _, line in read_lines(path) if line.strip()), "")
    if first.startswith("{"):
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            if value.get("type") == "header" and value.get("format") == FORMAT:
                return "memwal"
            if value.get("type") in ("entity", "relation"):
                return "memory-json"
    if path.suffix.lower() in _JSON_SUFFIXES:
        raise ImportFormatError(
            f"cannot tell what {path} holds: its first line is neither a memwal export header nor a memory.json "
            "entity or relation. Pass --format to say."
        )
    return "text"


# --- reading files: UTF-8, with the line and byte of what is wrong ---------------


def _not_utf8(path: Path, line_no: int, offset: int, byte: int) -> ImportFormatError:
    return ImportFormatError(
        f"{path}, line {line_no}: not UTF-8 text (byte {offset} of the file is 0x{byte:02x});"
        " save it as UTF-8 and import it again"
    )


def _unreadable(path: Path, exc: OSError) -> ImportFormatError:
    return ImportFormatError(f"cannot read {path}: {exc.strerror or exc}")


def read_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """(line number, text) of every line, decoded as strict UTF-8 with a leading BOM dropped.

    Streamed, so a large export is never held whole; a byte that is not UTF-8 stops the
    import with its line and offset instead of a decoder traceback.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with handle:
        offset, line_no = 0, 0
        while True:
            try:
                raw = handle.readline()
            except OSError as exc:
                raise _unreadable(path, exc) from None
            if not raw:
                return
            line_no += 1
            skip = len(codecs.BOM_UTF8) if line_no == 1 and raw.startswith(codecs.BOM_UTF8) else 0
            try:
                text = raw[skip:].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, line_no, offset + skip + exc.start, raw[skip + exc.start]) from None
            offset += len(raw)
            yield line_no, text


def read_text(path: Path) -> str:
    """The whole file as strict UTF-8 (a leading BOM dropped), or an error naming the line and byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        raise _not_utf8(path, data.count(b"\n", 0, at) + 1, at, data[at]) from None
