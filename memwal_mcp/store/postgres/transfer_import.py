"""Import at the row level: rows written back by id, all or nothing, within owner walls.

Import writes the whole file in one `transaction()`, so a refused or interrupted
import stores nothing. Every row is keyed by its public id (jobs, memories), its
natural key (revisions: memory, time, decision, body) or its primary key
(tombstones), and a row already present is skipped -- so importing a file twice
changes nothing. Owners are walls here too: a row whose id, or any id it names,
belongs to another owner is refused.

Imported memories get no vector: the curation worker's backlog pass embeds them, and
recall scores unembedded memories directly until then (`unembedded_count` says how many
are left).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from psycopg import Connection

from ...errors import InvalidInput
from ...normalize import norm_key
from ...records import Job
from ..records import ImportOutcome, ImportRow, Kind, LaneRow, MemoryRecord, RecordRefused, RevisionRow, TombstoneRow
from . import words
from .jobs import ensure_lane

# --- import ----------------------------------------------------------------


def _conflict(kind: str, row_id: str, owner: str) -> InvalidInput:
    return InvalidInput(
        f"{kind} {row_id!r} already exists in this database for an owner other than {owner!r}; "
        "an export cannot be imported a second time under another owner into the same database"
    )


def _is_forgotten(conn: Connection, owner: str, memory_id: str | None) -> bool:
    if memory_id is None:
        return False
    row = conn.execute("SELECT 1 FROM forgotten WHERE memory_id = %s AND owner = %s", (memory_id, owner)).fetchone()
    return row is not None


def _import_job(conn: Connection, job: Job, lanes: dict[tuple[str, str], int], out: ImportOutcome) -> None:
    found = conn.execute("SELECT owner FROM remember_jobs WHERE id = %s", (job.id,)).fetchone()
    if found is not None:
        if found[0] != job.owner:
            raise _conflict("job", job.id, job.owner)
        out.count("job", False)
        return
    text, decision = job.text, job.decision
    # A backup older than a forget here must not bring the forgotten text back.
    if _is_forgotten(conn, job.owner, job.memory_id):
        text, decision = "", "forgotten"
    lane = _lane(conn, lanes, job.owner, job.namespace)
    # DO NOTHING also covers (owner, idempotency_key) held here by another job: that key
    # already names an event in this database, and the same key is the same event.
    inserted = conn.execute(
        "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, status,"
        " attempts, decision, memory_id, error, created_at, updated_at, expires_at, supersedes, source_job_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            job.id,
            job.owner,
            job.namespace,
            lane,
            text,
            job.idempotency_key,
            job.occurred_at,
            job.status,
            job.attempts,
            decision,
            job.memory_id,
            job.error,
            job.created_at,
            job.updated_at,
            job.expires_at,
            ",".join(job.supersedes) or None,
            job.source_job_id,
        ),
    ).rowcount
    out.count("job", inserted == 1)


def _import_memory(
    conn: Connection, memory: MemoryRecord, lanes: dict[tuple[str, str], int], out: ImportOutcome
) -> None:
    found = conn.execute("SELECT owner FROM memories WHERE id = %s", (memory.id,)).fetchone()
    tombstone = conn.execute("SELECT owner FROM forgotten WHERE memory_id = %s", (memory.id,)).fetchone()
    known = found or tombstone
    if known is not None:
        if known[0] != memory.owner:
            raise _conflict("memory", memory.id, memory.owner)
        out.count("memory", False)  # present, or forgotten here: an older backup does not bring it back
        return
    lane = _lane(conn, lanes, memory.owner, memory.namespace)
    live = memory.status == "live"  # retired memories have left the indexes
    tsv, length = words.document(memory.body)
    conn.execute(
        "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
        " occurrences, vector_model, occurred_at, created_at, updated_at, tsv, doc_len, expires_at, superseded_by)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, %s, %s, %s, %s::tsvector, %s, %s, %s)",
        (
            memory.id,
            memory.owner,
            memory.namespace,
            lane,
            memory.body,
            norm_key(memory.body),
            memory.status,
            memory.retired_into if memory.status == "retired" else None,
            memory.source_job_id,
            memory.occurrences,
            memory.occurred_at,
            memory.created_at,
            memory.updated_at,
            tsv if live else None,
            length,
            memory.expires_at,
            memory.superseded_by if memory.status == "retired" else None,
        ),
    )
    out.count("memory", True)


def _import_revision(conn: Connection, revision: RevisionRow, out: ImportOutcome) -> None:
    found = conn.execute("SELECT pk, owner, status FROM memories WHERE id = %s", (revision.memory_id,)).fetchone()
    if found is None:
        if _is_forgotten(conn, revision.owner, revision.memory_id):
            out.count("revision", False)
            return
        raise InvalidInput(
            f"a revision names memory {revision.memory_id!r}, which is neither earlier in the file nor in "
            "this database; memory records must come before their revisions"
        )
    rowid, owner, status = found
    if owner != revision.owner:
        raise _conflict("memory", revision.memory_id, revision.owner)
    if status == "forgotten":
        out.count("revision", False)
        return
    merged = ",".join(revision.merged_ids) or None
    present = conn.execute(
        "SELECT 1 FROM memory_revisions WHERE memory_pk = %s AND created_at = %s AND decision = %s AND body = %s",
        (rowid, revision.created_at, revision.decision, revision.body),
    ).fetchone()
    if present is not None:
        out.count("revision", False)
        return
    conn.execute(
        "INSERT INTO memory_revisions (memory_pk, body, decision, job_id, llm_model, guard, merged_ids, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            rowid,
            revision.body,
            revision.decision,
            revision.job_id,
            revision.llm_model,
            revision.guard,
            merged,
            revision.created_at,
        ),
    )
    out.count("revision", True)


def _import_tombstone(
    conn: Connection, tombstone: TombstoneRow, lanes: dict[tuple[str, str], int], out: ImportOutcome
) -> None:
    found = conn.execute("SELECT owner FROM forgotten WHERE memory_id = %s", (tombstone.memory_id,)).fetchone()
    if found is not None:
        if found[0] != tombstone.owner:
            raise _conflict("tombstone", tombstone.memory_id, tombstone.owner)
        out.count("tombstone", False)
        return
    memory = conn.execute("SELECT owner, status FROM memories WHERE id = %s", (tombstone.memory_id,)).fetchone()
    if memory is not None:
        if memory[0] != tombstone.owner:
            raise _conflict("memory", tombstone.memory_id, tombstone.owner)
        if memory[1] != "forgotten":
            # The memory was forgotten at the source but still holds content here.
            out.to_forget.append((tombstone.owner, tombstone.memory_id))
            out.count("tombstone", True)
            return
    lane = _lane(conn, lanes, tombstone.owner, tombstone.namespace)
    if memory is None:
        _emptied_memory(conn, tombstone, lane)
    conn.execute(
        "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (%s, %s, %s, %s, %s)",
        (tombstone.memory_id, tombstone.owner, tombstone.namespace, tombstone.jobs, tombstone.forgotten_at),
    )
    out.count("tombstone", True)


def _emptied_memory(conn: Connection, tombstone: TombstoneRow, lane: int) -> None:
    """The row a forget leaves behind -- no body, status 'forgotten' -- which the erased jobs
    name and history reports on, as it was at the source.

    A file from before tombstones carried the memory's bookkeeping gives only the jobs: the
    first one that ended in the memory stands for its source. With no job at all there is
    nothing to rebuild from, and the tombstone stays alone.
    """
    source, created = tombstone.source_job_id, tombstone.created_at
    if source is None:
        first = conn.execute(
            "SELECT id, created_at FROM remember_jobs WHERE owner = %s AND memory_id = %s ORDER BY seq LIMIT 1",
            (tombstone.owner, tombstone.memory_id),
        ).fetchone()
        if first is None:
            return
        source, created = first[0], created if created is not None else first[1]
    conn.execute(
        "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
        " occurrences, vector_model, occurred_at, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, '', '', 'forgotten', %s, %s, 0, NULL, %s, %s, %s)",
        (
            tombstone.memory_id,
            tombstone.owner,
            tombstone.namespace,
            lane,
            tombstone.retired_into,
            source,
            tombstone.occurred_at,
            created if created is not None else tombstone.forgotten_at,
            tombstone.updated_at if tombstone.updated_at is not None else tombstone.forgotten_at,
        ),
    )


def _lane(conn: Connection, lanes: dict[tuple[str, str], int], owner: str, namespace: str) -> int:
    key = (owner, namespace)
    if key not in lanes:
        lanes[key] = ensure_lane(conn, owner, namespace)
    return lanes[key]


def _import_row(conn: Connection, row: ImportRow, lanes: dict[tuple[str, str], int], out: ImportOutcome) -> None:
    if isinstance(row, LaneRow):
        known = (row.owner, row.namespace) in lanes or conn.execute(
            "SELECT 1 FROM lanes WHERE owner = %s AND namespace = %s", (row.owner, row.namespace)
        ).fetchone()
        _lane(conn, lanes, row.owner, row.namespace)
        out.count("lane", not known)
    elif isinstance(row, Job):
        _import_job(conn, row, lanes, out)
    elif isinstance(row, MemoryRecord):
        _import_memory(conn, row, lanes, out)
    elif isinstance(row, RevisionRow):
        _import_revision(conn, row, out)
    else:
        _import_tombstone(conn, row, lanes, out)


def _high_water(conn: Connection) -> tuple[int, int, int]:
    """The largest job seq, memory pk and revision id: rows above them are this import's."""
    row = conn.execute(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM remember_jobs), (SELECT COALESCE(MAX(pk), 0) FROM memories),"
        " (SELECT COALESCE(MAX(id), 0) FROM memory_revisions)"
    ).fetchone()
    assert row is not None  # an aggregate always answers
    return int(row[0]), int(row[1]), int(row[2])


# A reference may name a record further down the file (a job comes before the memory it
# ended in), so references are checked once everything is written, in the same transaction.
# Each query: (id of the referring record, what it names, whose the named record is or NULL).
_OWNER_OF_MEMORY = (
    "COALESCE((SELECT owner FROM memories WHERE id = {ref}), (SELECT owner FROM forgotten WHERE memory_id = {ref}))"
)
_REFERENCES: tuple[tuple[Kind, str, str, str], ...] = (
    (
        "job",
        "memory",
        "its memory_id",
        f"SELECT j.id, j.memory_id, {_OWNER_OF_MEMORY.format(ref='j.memory_id')} AS named, j.owner FROM remember_jobs j"
        " WHERE j.seq > %s AND j.memory_id IS NOT NULL",
    ),
    (
        "memory",
        "job",
        "its source_job_id",
        "SELECT m.id, m.source_job_id, (SELECT owner FROM remember_jobs WHERE id = m.source_job_id) AS named, m.owner"
        " FROM memories m WHERE m.pk > %s",
    ),
    (
        "memory",
        "memory",
        "its retired_into",
        f"SELECT m.id, m.retired_into, {_OWNER_OF_MEMORY.format(ref='m.retired_into')} AS named, m.owner"
        " FROM memories m WHERE m.pk > %s AND m.retired_into IS NOT NULL",
    ),
    (
        "memory",
        "memory",
        "its superseded_by",
        f"SELECT m.id, m.superseded_by, {_OWNER_OF_MEMORY.format(ref='m.superseded_by')} AS named, m.owner"
        " FROM memories m WHERE m.pk > %s AND m.superseded_by IS NOT NULL",
    ),
    (
        "job",
        "job",
        "its source_job_id",
        "SELECT j.id, j.source_job_id, (SELECT owner FROM remember_jobs WHERE id = j.source_job_id) AS named,"
        " j.owner FROM remember_jobs j WHERE j.seq > %s AND j.source_job_id IS NOT NULL",
    ),
    (
        "revision",
        "job",
        "its job_id",
        "SELECT r.id, r.job_id, (SELECT owner FROM remember_jobs WHERE id = r.job_id) AS named, m.owner"
        " FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk WHERE r.id > %s AND r.job_id IS NOT NULL",
    ),
)


def _revision_key(conn: Connection, revision_id: object) -> dict[str, object]:
    found = conn.execute(
        "SELECT m.id, r.created_at, r.decision FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
        " WHERE r.id = %s",
        (revision_id,),
    ).fetchone()
    memory_id, created_at, decision = found if found else (None, None, None)
    return {"memory_id": memory_id, "created_at": created_at, "decision": decision}


def _refused_reference(
    conn: Connection,
    kind: Kind,
    record: object,
    named_kind: str,
    field_name: str,
    ref: str,
    named_owner: str | None,
) -> RecordRefused:
    key = _revision_key(conn, record) if kind == "revision" else {"id": record}
    what = f"a revision of memory {key['memory_id']!r}" if kind == "revision" else f"{kind} {record!r}"
    if named_owner is None:
        reason = f"{what}: {field_name} names {named_kind} {ref!r}, which is neither in the file nor in this database"
    else:
        reason = (
            f"{what}: {field_name} names {named_kind} {ref!r} of another owner; an import cannot refer to "
            "another owner's records"
        )
    return RecordRefused(reason, kind=kind, key=key)


def _check_references(conn: Connection, since: tuple[int, int, int]) -> None:
    """Every id this import wrote names a record that exists and has the same owner."""
    marks = {"job": since[0], "memory": since[1], "revision": since[2]}
    for kind, named_kind, field_name, sql in _REFERENCES:
        row = conn.execute(
            f"SELECT * FROM ({sql}) AS refs WHERE named IS NULL OR named != owner LIMIT 1", (marks[kind],)
        ).fetchone()
        if row is not None:
            raise _refused_reference(conn, kind, row[0], named_kind, field_name, row[1], row[2])
    # merged_ids is a list in one column: checked id by id.
    for revision_id, merged, owner in conn.execute(
        "SELECT r.id, r.merged_ids, m.owner FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
        " WHERE r.id > %s AND r.merged_ids IS NOT NULL",
        (since[2],),
    ).fetchall():
        for ref in merged.split(","):
            found = conn.execute(f"SELECT {_OWNER_OF_MEMORY.format(ref='%s')}", (ref, ref)).fetchone()
            named = found[0] if found else None
            if named != owner:
                raise _refused_reference(conn, "revision", revision_id, "memory", "its merged_ids", ref, named)


def import_rows(conn: Connection, rows: Iterable[tuple[int, ImportRow]], lock: str) -> ImportOutcome:
    """Write (line number, row) pairs in the order given, all in one transaction; rows already
    present are skipped. Any refusal -- a row, a reference, or an error raised while `rows` is
    read -- rolls the whole import back: a refused import stores nothing."""
    out = ImportOutcome()
    lanes: dict[tuple[str, str], int] = {}
    with conn.transaction():
        conn.execute(lock)
        since = _high_water(conn)
        for line, row in rows:
            try:
                _import_row(conn, row, lanes, out)
            except InvalidInput as exc:
                raise RecordRefused(str(exc), line=line) from None
        _check_references(conn, since)
    return out


def unembedded_count(conn: Connection, owners: Sequence[str] | None) -> int:
    """Live memories without a vector yet, of these owners (None: of every owner)."""
    params: tuple[object, ...] = ()
    if owners is None:
        sql = "SELECT COUNT(*) FROM memories WHERE status = 'live' AND vector_model IS NULL"
    else:
        if not owners:
            return 0
        sql = "SELECT COUNT(*) FROM memories WHERE status = 'live' AND vector_model IS NULL AND owner = ANY(%s)"
        return int((conn.execute(sql, (list(owners),)).fetchone() or (0,))[0])
    return int((conn.execute(sql, params).fetchone() or (0,))[0])
