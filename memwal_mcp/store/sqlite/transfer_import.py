"""The statements an SQLite import runs (importing.py makes every decision, for every backend).

Imported memories get no vector and, when live, enter the FTS5 index here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ...normalize import norm_key
from ...records import Job
from ..importing import Dangling
from ..records import ImportRow, Kind, MemoryRecord, RevisionRow, TombstoneRow
from . import fts
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
        " WHERE j.seq > ? AND j.memory_id IS NOT NULL",
    ),
    (
        "memory",
        "job",
        "its source_job_id",
        "SELECT m.id, m.source_job_id, (SELECT owner FROM remember_jobs WHERE id = m.source_job_id) AS named, m.owner"
        " FROM memories m WHERE m.rowid > ?",
    ),
    (
        "memory",
        "memory",
        "its retired_into",
        f"SELECT m.id, m.retired_into, {_OWNER_OF_MEMORY.format(ref='m.retired_into')} AS named, m.owner"
        " FROM memories m WHERE m.rowid > ? AND m.retired_into IS NOT NULL",
    ),
    (
        "memory",
        "memory",
        "its superseded_by",
        f"SELECT m.id, m.superseded_by, {_OWNER_OF_MEMORY.format(ref='m.superseded_by')} AS named, m.owner"
        " FROM memories m WHERE m.rowid > ? AND m.superseded_by IS NOT NULL",
    ),
    (
        "job",
        "job",
        "its source_job_id",
        "SELECT j.id, j.source_job_id, (SELECT owner FROM remember_jobs WHERE id = j.source_job_id) AS named,"
        " j.owner FROM remember_jobs j WHERE j.seq > ? AND j.source_job_id IS NOT NULL",
    ),
    (
        "revision",
        "job",
        "its job_id",
        "SELECT r.id, r.job_id, (SELECT owner FROM remember_jobs WHERE id = r.job_id) AS named, m.owner"
        " FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid WHERE r.id > ? AND r.job_id IS NOT NULL",
    ),
)


class SQLiteImport:
    """importing.ImportTarget over the writer's connection, inside its transaction."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def prepare(self, rows: Sequence[ImportRow]) -> None:
        """Nothing to gain: a statement on a local file costs no round trip."""

    def job_owner(self, job_id: str) -> str | None:
        row = self.conn.execute("SELECT owner FROM remember_jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else row[0]

    def memory_state(self, memory_id: str) -> tuple[int, str, str] | None:
        row = self.conn.execute("SELECT rowid, owner, status FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def tombstone_owner(self, memory_id: str) -> str | None:
        row = self.conn.execute("SELECT owner FROM forgotten WHERE memory_id = ?", (memory_id,)).fetchone()
        return None if row is None else row[0]

    def lane_exists(self, owner: str, namespace: str) -> bool:
        sql = "SELECT 1 FROM lanes WHERE owner = ? AND namespace = ?"
        return self.conn.execute(sql, (owner, namespace)).fetchone() is not None

    def ensure_lane(self, owner: str, namespace: str) -> int:
        return ensure_lane(self.conn, owner, namespace)

    def insert_job(self, job: Job, lane: int, text: str, decision: str | None) -> bool:
        return (
            self.conn.execute(
                "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, status,"
                " attempts, decision, memory_id, error, created_at, updated_at, expires_at, supersedes, source_job_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
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
        retired = memory.status == "retired"
        rowid = self.conn.execute(
            "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
            " occurrences, vector_model, occurred_at, created_at, updated_at, expires_at, superseded_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)",
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
                memory.expires_at,
                memory.superseded_by if retired else None,
            ),
        ).lastrowid
        assert rowid is not None  # an INSERT always sets it
        if not retired:  # retired memories have left the indexes
            fts.add(self.conn, lane, rowid, memory.body)

    def has_revision(self, memory_pk: int, revision: RevisionRow) -> bool:
        sql = "SELECT 1 FROM memory_revisions WHERE memory_rowid = ? AND created_at = ? AND decision = ? AND body = ?"
        found = self.conn.execute(sql, (memory_pk, revision.created_at, revision.decision, revision.body))
        return found.fetchone() is not None

    def insert_revision(self, memory_pk: int, revision: RevisionRow) -> None:
        self.conn.execute(
            "INSERT INTO memory_revisions"
            " (memory_rowid, body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            "SELECT id, created_at FROM remember_jobs WHERE owner = ? AND memory_id = ? ORDER BY seq LIMIT 1",
            (owner, memory_id),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def insert_emptied_memory(
        self, tombstone: TombstoneRow, lane: int, source_job_id: str, created_at: float, updated_at: float
    ) -> None:
        self.conn.execute(
            "INSERT INTO memories (id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
            " occurrences, vector_model, occurred_at, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, '', '', 'forgotten', ?, ?, 0, NULL, ?, ?, ?)",
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
            "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (?, ?, ?, ?, ?)",
            (tombstone.memory_id, tombstone.owner, tombstone.namespace, tombstone.jobs, tombstone.forgotten_at),
        )

    def high_water(self) -> tuple[int, int, int]:
        """The largest job seq, memory rowid and revision id."""
        return self.conn.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM remember_jobs), (SELECT COALESCE(MAX(rowid), 0) FROM memories),"
            " (SELECT COALESCE(MAX(id), 0) FROM memory_revisions)"
        ).fetchone()

    def first_dangling(self, since: tuple[int, int, int]) -> Dangling | None:
        marks = {"job": since[0], "memory": since[1], "revision": since[2]}
        for kind, named_kind, field_name, sql in _REFERENCES:
            row = self.conn.execute(
                f"SELECT * FROM ({sql}) WHERE named IS NULL OR named != owner LIMIT 1", (marks[kind],)
            ).fetchone()
            if row is not None:
                return Dangling(kind, self._key(kind, row[0]), field_name, named_kind, row[1], row[2])
        # merged_ids is a list in one column: checked id by id.
        for revision_id, merged, owner in self.conn.execute(
            "SELECT r.id, r.merged_ids, m.owner FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
            " WHERE r.id > ? AND r.merged_ids IS NOT NULL",
            (since[2],),
        ).fetchall():
            for ref in merged.split(","):
                named = self.conn.execute(f"SELECT {_OWNER_OF_MEMORY.format(ref='?')}", (ref, ref)).fetchone()[0]
                if named != owner:
                    return Dangling(
                        "revision", self._key("revision", revision_id), "its merged_ids", "memory", ref, named
                    )
        return None

    def _key(self, kind: Kind, record: object) -> dict[str, object]:
        """How importing names the record: its id, or a revision's memory, time and decision."""
        if kind != "revision":
            return {"id": record}
        memory_id, created_at, decision = self.conn.execute(
            "SELECT m.id, r.created_at, r.decision FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
            " WHERE r.id = ?",
            (record,),
        ).fetchone()
        return {"memory_id": memory_id, "created_at": created_at, "decision": decision}


def unembedded_count(conn: sqlite3.Connection, owners: Sequence[str] | None) -> int:
    """Live memories without a vector yet, of these owners (None: of every owner)."""
    params: tuple[str, ...] = ()
    if owners is None:
        sql = "SELECT COUNT(*) FROM memories WHERE status = 'live' AND vector_model IS NULL"
    else:
        if not owners:
            return 0
        marks = ",".join("?" * len(owners))
        sql = f"SELECT COUNT(*) FROM memories WHERE status = 'live' AND vector_model IS NULL AND owner IN ({marks})"
        params = tuple(owners)
    return conn.execute(sql, params).fetchone()[0]
