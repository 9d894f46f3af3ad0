"""The statements a PostgreSQL import runs (importing.py makes every decision, for every backend).

Imported memories get no vector; a live one gets its tsvector and length here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from psycopg import Connection

from ...normalize import norm_key
from ...records import Job
from ..importing import Dangling
from ..records import ImportRow, Kind, MemoryRecord, RevisionRow, TombstoneRow
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


_JOB_INSERT = (
    "INSERT INTO remember_jobs (id, owner, namespace, lane_id, text, idempotency_key, occurred_at, status, attempts,"
    " decision, memory_id, error, created_at, updated_at, expires_at, supersedes, source_job_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)
_MEMORY_INSERT = (
    "INSERT INTO memories (pk, id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
    " occurrences, vector_model, occurred_at, created_at, updated_at, tsv, doc_len, expires_at, superseded_by,"
    " words_version)"
    f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, %s, %s, %s, %s::tsvector, %s, %s, %s, {words.VERSION})"
)
_EMPTIED_INSERT = (
    "INSERT INTO memories (pk, id, owner, namespace, lane_id, body, norm_key, status, retired_into, source_job_id,"
    " occurrences, vector_model, occurred_at, created_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, '', '', 'forgotten', %s, %s, 0, NULL, %s, %s, %s)"
)
_REVISION_INSERT = (
    "INSERT INTO memory_revisions"
    " (memory_pk, body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_TOMBSTONE_INSERT = (
    "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (%s, %s, %s, %s, %s)"
)
# In the order they are sent: a revision names its memory's row.
_INSERTS = (
    ("job", _JOB_INSERT),
    ("memory", _MEMORY_INSERT),
    ("emptied", _EMPTIED_INSERT),
    ("revision", _REVISION_INSERT),
    ("tombstone", _TOMBSTONE_INSERT),
)
# Memory keys taken from the sequence at a time when a chunk did not say how many it needs.
_PK_RESERVE = 100


class PostgresImport:
    """importing.ImportTarget over the writer's connection, inside its transaction.

    Every statement is a round trip to the server, and a record takes several (is the id
    taken, is it forgotten here, the insert): about 1,000 records a second. So `prepare` looks
    up what a chunk of rows names in four queries (job owners, memory states, tombstones,
    idempotency keys taken) and takes the memories' keys from their sequence in one more, the
    answers are kept as the import goes on, and the inserts wait in lists that go out as
    pipelined batches (executemany) before any query that could read them, and at
    `first_dangling`, which importing.py calls last."""

    __slots__ = (
        "conn",
        "_jobs",
        "_memories",
        "_tombstones",
        "_keys",
        "_keys_taken",
        "_new",
        "_new_revisions",
        "_pending",
        "_pks",
    )

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._jobs: dict[str, str | None] = {}  # job id -> owner; None: no such job
        self._memories: dict[str, tuple[int, str, str] | None] = {}  # memory id -> (pk, owner, status)
        self._tombstones: dict[str, str | None] = {}  # memory id -> owner of its tombstone
        self._keys: set[tuple[str, str]] = set()  # (owner, idempotency key) pairs looked up
        self._keys_taken: set[tuple[str, str]] = set()  # ... of those, the ones a job holds
        self._new: set[int] = set()  # pks of the memories this import wrote
        self._new_revisions: set[tuple[int, float, str, str]] = set()
        self._pending: dict[str, list[tuple[object, ...]]] = {name: [] for name, _ in _INSERTS}
        self._pks: deque[int] = deque()

    # --- batching ----------------------------------------------------------------

    def prepare(self, rows: Sequence[ImportRow]) -> None:
        jobs = {row.id for row in rows if isinstance(row, Job)} - self._jobs.keys()
        named: set[str] = set()
        for row in rows:
            if isinstance(row, Job) and row.memory_id is not None:
                named.add(row.memory_id)
            elif isinstance(row, MemoryRecord):
                named.add(row.id)
            elif isinstance(row, (RevisionRow, TombstoneRow)):
                named.add(row.memory_id)
        keys = {(row.owner, row.idempotency_key) for row in rows if isinstance(row, Job) and row.idempotency_key}
        keys = {key for key in keys if key not in self._keys}  # type: ignore[misc]
        new_rows = sum(isinstance(row, (MemoryRecord, TombstoneRow)) for row in rows)
        self._flush()
        if jobs:
            self._jobs.update(dict.fromkeys(jobs))
            sql = "SELECT id, owner FROM remember_jobs WHERE id = ANY(%s)"
            self._jobs.update({str(i): str(o) for i, o in self.conn.execute(sql, (list(jobs),))})
        memories = named - self._memories.keys()
        if memories:
            self._memories.update(dict.fromkeys(memories))
            sql = "SELECT id, pk, owner, status FROM memories WHERE id = ANY(%s)"
            for memory_id, pk, owner, status in self.conn.execute(sql, (list(memories),)):
                self._memories[str(memory_id)] = (int(pk), str(owner), str(status))
        tombstones = named - self._tombstones.keys()
        if tombstones:
            self._tombstones.update(dict.fromkeys(tombstones))
            sql = "SELECT memory_id, owner FROM forgotten WHERE memory_id = ANY(%s)"
            self._tombstones.update({str(m): str(o) for m, o in self.conn.execute(sql, (list(tombstones),))})
        if keys:
            self._keys |= keys  # type: ignore[arg-type]
            owners, names = [owner for owner, _ in keys], [key for _, key in keys]
            sql = (
                "SELECT j.owner, j.idempotency_key FROM remember_jobs j"
                " JOIN unnest(%s::text[], %s::text[]) AS k (owner, key) ON j.owner = k.owner AND j.idempotency_key = k.key"
            )
            self._keys_taken.update((str(o), str(k)) for o, k in self.conn.execute(sql, (owners, names)))
        if new_rows > len(self._pks):
            self._reserve(new_rows - len(self._pks))

    def _reserve(self, count: int) -> None:
        rows = self.conn.execute(
            "SELECT nextval(pg_get_serial_sequence('memories', 'pk')) FROM generate_series(1, %s)", (count,)
        ).fetchall()
        self._pks.extend(sorted(int(row[0]) for row in rows))

    def _pk(self) -> int:
        if not self._pks:
            self._reserve(_PK_RESERVE)
        return self._pks.popleft()

    def _flush(self) -> None:
        """Send what waits, in an order where each row's references exist."""
        for name, sql in _INSERTS:
            rows = self._pending[name]
            if not rows:
                continue
            if name == "memory":
                # The row triggers leave the lane totals to this import (migration 005): one
                # statement per table for the batch instead of one update per memory and word.
                self.conn.execute("SELECT set_config('memwal.bulk_import', 'on', true)")
            with self.conn.cursor() as cursor:
                cursor.executemany(sql, rows)
            if name == "memory":
                self._add_totals([int(row[0]) for row in rows])  # type: ignore[call-overload]
            rows.clear()

    def _add_totals(self, pks: list[int]) -> None:
        """What the row triggers would have added for these new memories: each lane's live
        count, characters and tokens, and each of its words' document count."""
        self.conn.execute(
            "UPDATE lanes l SET live_count = l.live_count + d.n, live_chars = l.live_chars + d.chars,"
            " live_tokens = l.live_tokens + d.tokens"
            " FROM (SELECT lane_id, count(*) AS n, sum(length(body)) AS chars, sum(doc_len) AS tokens"
            "       FROM memories WHERE pk = ANY(%s) AND status = 'live' GROUP BY lane_id) d"
            " WHERE l.id = d.lane_id",
            (pks,),
        )
        self.conn.execute(
            "INSERT INTO lane_terms (lane_id, lexeme, docs)"
            " SELECT m.lane_id, u.lexeme, count(*) FROM memories m, unnest(m.tsv) u"
            " WHERE m.pk = ANY(%s) AND m.tsv IS NOT NULL GROUP BY m.lane_id, u.lexeme ORDER BY m.lane_id, u.lexeme"
            " ON CONFLICT (lane_id, lexeme) DO UPDATE SET docs = lane_terms.docs + EXCLUDED.docs",
            (pks,),
        )

    def _query(self, sql: str, params: Sequence[object]) -> tuple | None:
        self._flush()
        return self.conn.execute(sql, params).fetchone()

    # --- lookups -------------------------------------------------------------------

    def job_owner(self, job_id: str) -> str | None:
        if job_id not in self._jobs:
            row = self._query("SELECT owner FROM remember_jobs WHERE id = %s", (job_id,))
            self._jobs[job_id] = None if row is None else str(row[0])
        return self._jobs[job_id]

    def memory_state(self, memory_id: str) -> tuple[int, str, str] | None:
        if memory_id not in self._memories:
            row = self._query("SELECT pk, owner, status FROM memories WHERE id = %s", (memory_id,))
            self._memories[memory_id] = None if row is None else (int(row[0]), str(row[1]), str(row[2]))
        return self._memories[memory_id]

    def tombstone_owner(self, memory_id: str) -> str | None:
        if memory_id not in self._tombstones:
            row = self._query("SELECT owner FROM forgotten WHERE memory_id = %s", (memory_id,))
            self._tombstones[memory_id] = None if row is None else str(row[0])
        return self._tombstones[memory_id]

    def lane_exists(self, owner: str, namespace: str) -> bool:
        sql = "SELECT 1 FROM lanes WHERE owner = %s AND namespace = %s"
        return self.conn.execute(sql, (owner, namespace)).fetchone() is not None

    def ensure_lane(self, owner: str, namespace: str) -> int:
        return ensure_lane(self.conn, owner, namespace)

    # --- inserts -------------------------------------------------------------------

    def insert_job(self, job: Job, lane: int, text: str, decision: str | None) -> bool:
        if job.idempotency_key is not None:
            key = (job.owner, job.idempotency_key)
            if key not in self._keys:
                row = self._query(
                    "SELECT 1 FROM remember_jobs WHERE owner = %s AND idempotency_key = %s", (job.owner, key[1])
                )
                self._keys.add(key)
                if row is not None:
                    self._keys_taken.add(key)
            if key in self._keys_taken:
                return False  # that key names an event here already
            self._keys_taken.add(key)
        self._pending["job"].append(
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
            )
        )
        self._jobs[job.id] = job.owner
        return True

    def insert_memory(self, memory: MemoryRecord, lane: int) -> None:
        retired = memory.status == "retired"  # retired memories have left the indexes
        tsv, length = words.document(memory.body)
        pk = self._pk()
        self._pending["memory"].append(
            (
                pk,
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
            )
        )
        self._memories[memory.id] = (pk, memory.owner, memory.status)
        self._new.add(pk)

    def has_revision(self, memory_pk: int, revision: RevisionRow) -> bool:
        mark = (memory_pk, revision.created_at, revision.decision, revision.body)
        if memory_pk in self._new:  # every revision it has, this import wrote
            return mark in self._new_revisions
        sql = "SELECT 1 FROM memory_revisions WHERE memory_pk = %s AND created_at = %s AND decision = %s AND body = %s"
        return self._query(sql, mark) is not None

    def insert_revision(self, memory_pk: int, revision: RevisionRow) -> None:
        self._pending["revision"].append(
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
            )
        )
        if memory_pk in self._new:
            self._new_revisions.add((memory_pk, revision.created_at, revision.decision, revision.body))

    def first_job(self, owner: str, memory_id: str) -> tuple[str, float] | None:
        row = self._query(
            "SELECT id, created_at FROM remember_jobs WHERE owner = %s AND memory_id = %s ORDER BY seq LIMIT 1",
            (owner, memory_id),
        )
        return None if row is None else (str(row[0]), float(row[1]))

    def insert_emptied_memory(
        self, tombstone: TombstoneRow, lane: int, source_job_id: str, created_at: float, updated_at: float
    ) -> None:
        pk = self._pk()
        self._pending["emptied"].append(
            (
                pk,
                tombstone.memory_id,
                tombstone.owner,
                tombstone.namespace,
                lane,
                tombstone.retired_into,
                source_job_id,
                tombstone.occurred_at,
                created_at,
                updated_at,
            )
        )
        self._memories[tombstone.memory_id] = (pk, tombstone.owner, "forgotten")
        self._new.add(pk)

    def insert_tombstone(self, tombstone: TombstoneRow) -> None:
        self._pending["tombstone"].append(
            (tombstone.memory_id, tombstone.owner, tombstone.namespace, tombstone.jobs, tombstone.forgotten_at)
        )
        self._tombstones[tombstone.memory_id] = tombstone.owner

    def high_water(self) -> tuple[int, int, int]:
        """The largest job seq, memory pk and revision id."""
        row = self._query(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM remember_jobs), (SELECT COALESCE(MAX(pk), 0) FROM memories),"
            " (SELECT COALESCE(MAX(id), 0) FROM memory_revisions)",
            (),
        )
        assert row is not None  # an aggregate always answers
        return int(row[0]), int(row[1]), int(row[2])

    def first_dangling(self, since: tuple[int, int, int]) -> Dangling | None:
        self._flush()  # the last rows of the import go out here
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
