"""The statements a PostgreSQL import runs (importing.py makes every decision, for every backend).

Imported memories get no vector; a live one gets its tsvector and length here.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import Connection

from ...normalize import norm_key
from ...records import Job
from ..importing import Dangling
from ..records import Kind, MemoryRecord, RevisionRow, TombstoneRow
from . import words
from .jobs import ensure_lane

# References are checked once everything is written, in the same transaction.
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


class PostgresImport:
    """importing.ImportTarget over the writer's connection, inside its transaction."""

    __slots__ = ("conn",)

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def job_owner(self, job_id: str) -> str | None:
        row = self.conn.execute("SELECT owner FROM remember_jobs WHERE id = %s", (job_id,)).fetchone()
        return None if row is None else str(row[0])

    def memory_state(self, memory_id: str) -> tuple[int, str, str] | None:
        row = self.conn.execute("SELECT pk, owner, status FROM memories WHERE id = %s", (memory_id,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), str(row[2]))

    def tombstone_owner(self, memory_id: str) -> str | None:
        row = self.conn.execute("SELECT owner FROM forgotten WHERE memory_id = %s", (memory_id,)).fetchone()
        return None if row is None else str(row[0])

    def lane_exists(self, owner: str, namespace: str) -> bool:
        sql = "SELECT 1 FROM lanes WHERE owner = %s AND namespace = %s"
        return self.conn.execute(sql, (owner, namespace)).fetchone() is not None

    def ensure_lane(self, owner: str, namespace: str) -> int:
        return ensure_lane(self.conn, owner, namespace)

    def insert_job(self, job: Job, lane: int, text: str, decision: str | None) -> bool:
        return (
            self.conn.execute(
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
            == 1
        )

    def insert_memory(self, memory: MemoryRecord, lane: int) -> None:
        retired = memory.status == "retired"  # retired memories have left the indexes
        tsv, length = words.document(memory.body)
        self.conn.execute(
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
                memory.retired_into if retired else None,
                memory.source_job_id,
                memory.occurrences,
                memory.occurred_at,
                memory.created_at,
                memory.updated_at,
                None if retired else tsv,
                length,
                memory.expires_at,
                memory.superseded_by if retired else None,
            ),
        )

    def has_revision(self, memory_pk: int, revision: RevisionRow) -> bool:
        sql = "SELECT 1 FROM memory_revisions WHERE memory_pk = %s AND created_at = %s AND decision = %s AND body = %s"
        found = self.conn.execute(sql, (memory_pk, revision.created_at, revision.decision, revision.body))
        return found.fetchone() is not None

    def insert_revision(self, memory_pk: int, revision: RevisionRow) -> None:
        self.conn.execute(
            "INSERT INTO memory_revisions"
            " (memory_pk, body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                memory_pk,
                revision.body,
                revision.decision,
                revision.job_id,
                revision.llm_model,
                revision.guard,
                ",".join(revision.merged_ids) or None,
                revision.created_at,
                revision.expires_at,
            ),
        )

    def first_job(self, owner: str, memory_id: str) -> tuple[str, float] | None:
        row = self.conn.execute(
            "SELECT id, created_at FROM remember_jobs WHERE owner = %s AND memory_id = %s ORDER BY seq LIMIT 1",
            (owner, memory_id),
        ).fetchone()
        return None if row is None else (str(row[0]), float(row[1]))

    def insert_emptied_memory(
        self, tombstone: TombstoneRow, lane: int, source_job_id: str, created_at: float, updated_at: float
    ) -> None:
        self.conn.execute(
            "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
            " occurrences, vector_model, occurred_at, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, '', '', 'forgotten', %s, %s, 0, NULL, %s, %s, %s)",
            (
                tombstone.memory_id,
                tombstone.owner,
                tombstone.namespace,
                lane,
                tombstone.retired_into,
                source_job_id,
                tombstone.occurred_at,
                created_at,
                updated_at,
            ),
        )

    def insert_tombstone(self, tombstone: TombstoneRow) -> None:
        self.conn.execute(
            "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (%s, %s, %s, %s, %s)",
            (tombstone.memory_id, tombstone.owner, tombstone.namespace, tombstone.jobs, tombstone.forgotten_at),
        )

    def high_water(self) -> tuple[int, int, int]:
        """The largest job seq, memory pk and revision id."""
        row = self.conn.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM remember_jobs), (SELECT COALESCE(MAX(pk), 0) FROM memories),"
            " (SELECT COALESCE(MAX(id), 0) FROM memory_revisions)"
        ).fetchone()
        assert row is not None  # an aggregate always answers
        return int(row[0]), int(row[1]), int(row[2])

    def first_dangling(self, since: tuple[int, int, int]) -> Dangling | None:
        marks = {"job": since[0], "memory": since[1], "revision": since[2]}
        for kind, named_kind, field_name, sql in _REFERENCES:
            row = self.conn.execute(
                f"SELECT * FROM ({sql}) AS refs WHERE named IS NULL OR named != owner LIMIT 1", (marks[kind],)
            ).fetchone()
            if row is not None:
                return Dangling(kind, self._key(kind, row[0]), field_name, named_kind, row[1], row[2])
        # merged_ids is a list in one column: checked id by id.
        for revision_id, merged, owner in self.conn.execute(
            "SELECT r.id, r.merged_ids, m.owner FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
            " WHERE r.id > %s AND r.merged_ids IS NOT NULL",
            (since[2],),
        ).fetchall():
            for ref in merged.split(","):
                found = self.conn.execute(f"SELECT {_OWNER_OF_MEMORY.format(ref='%s')}", (ref, ref)).fetchone()
                named = found[0] if found else None
                if named != owner:
                    return Dangling(
                        "revision", self._key("revision", revision_id), "its merged_ids", "memory", ref, named
                    )
        return None

    def _key(self, kind: Kind, record: object) -> dict[str, object]:
        """How importing names the record: its id, or a revision's memory, time and decision."""
        if kind != "revision":
            return {"id": record}
        found = self.conn.execute(
            "SELECT m.id, r.created_at, r.decision FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
            " WHERE r.id = %s",
            (record,),
        ).fetchone()
        memory_id, created_at, decision = found if found else (None, None, None)
        return {"memory_id": memory_id, "created_at": created_at, "decision": decision}


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
