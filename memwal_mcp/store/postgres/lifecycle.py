"""Forget and undo on PostgreSQL: the statements (store/lifecycle.py makes every decision, for
every backend), and how the erased bytes go.

Forget erases what the SQLite backend erases -- the memory's body and words, its previous
bodies, its vector, the text of every job that ended in it, of memories a CONSOLIDATE folded
into it, and of queued jobs repeating any of that text -- in one transaction, and keeps a
tombstone. Once it commits no live row holds the text (nor its words: lane_terms drops a word
no live memory of the lane holds). The old row versions stay in the table files until VACUUM
removes them, which the store runs right after (erasure.py); `wal_cleared` says whether it
could (a transaction holding an older snapshot keeps them).
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import Connection

from ...normalize import norm_key
from ...records import SUPERSEDED, UNSUPERSEDED
from ..lifecycle import FoldedJob, JobState
from ..records import StoredCopy, ids_of
from ..shown import with_ctes
from . import memories, revisions, vectors


def copies_of(conn: Connection, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
    """Every memory of the owner in the lanes with one of these normalized texts -- live, expired
    or superseded (a live one a queued correction supersedes, as recall reads it) -- and every such
    queued job (see the SQLite backend's lifecycle.copies_of)."""
    wanted = set(keys)
    if not wanted or not lanes:
        return []
    shown = memories.reading_of(conn)
    found = [
        StoredCopy.of(memories.row(row))
        for row in conn.execute(
            f"{with_ctes(shown)}SELECT {shown.columns} FROM memories{shown.join} WHERE owner = %s"
            " AND (status = 'live' OR (status = 'retired' AND memories.superseded_by IS NOT NULL))"
            " AND lane_id = ANY(%s) AND norm_key = ANY(%s) ORDER BY memories.created_at, memories.id",
            (owner, list(lanes), sorted(wanted)),
        )
    ]
    for job_id, text, expires_at in conn.execute(
        "SELECT id, text, expires_at FROM remember_jobs WHERE owner = %s AND status = 'queued' AND lane_id = ANY(%s)"
        " ORDER BY seq",
        (owner, list(lanes)),
    ):
        key = norm_key(text)
        if key in wanted:
            found.append(StoredCopy(job_id, key, text, expires_at))
    return found


_ERASE_JOB = "text = '', decision = 'forgotten', error = NULL, idempotency_key = NULL, updated_at = %s"


class PostgresLifecycle:
    """lifecycle.LifecycleTarget over the writer's connection, inside its transaction (which
    holds the write lock)."""

    __slots__ = ("conn",)

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def folded_rows(self, owner: str, ids: Sequence[str]) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT pk, id FROM memories WHERE owner = %s AND (id = ANY(%s) OR retired_into = ANY(%s)) ORDER BY pk",
            (owner, list(ids), list(ids)),
        ).fetchall()
        return [(int(pk), mid) for pk, mid in rows]

    def erased_texts(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT lane_id, body FROM memories WHERE pk = ANY(%(pks)s)"
            " UNION ALL SELECT m.lane_id, r.body FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
            "  WHERE r.memory_pk = ANY(%(pks)s)"
            " UNION ALL SELECT lane_id, text FROM remember_jobs WHERE owner = %(owner)s AND memory_id = ANY(%(ids)s)",
            {"pks": list(pks), "ids": list(ids), "owner": owner},
        ).fetchall()
        return [(int(lane), text) for lane, text in rows]

    def queued_texts(self, lanes: Sequence[int]) -> list[tuple[int, int, str]]:
        rows = self.conn.execute(
            "SELECT seq, lane_id, text FROM remember_jobs WHERE lane_id = ANY(%s) AND status = 'queued'", (list(lanes),)
        ).fetchall()
        return [(int(seq), int(lane), text) for seq, lane, text in rows]

    def job_state(self, owner: str, job_id: str) -> JobState | None:
        row = self.conn.execute(
            "SELECT seq, lane_id, text, decision, memory_id, CASE WHEN status = 'queued' THEN supersedes END"
            " FROM remember_jobs WHERE owner = %s AND id = %s",
            (owner, job_id),
        ).fetchone()
        return None if row is None else JobState(int(row[0]), int(row[1]), row[2], row[3], row[4], ids_of(row[5]))

    def merge_spans(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, int, int]]:
        rows = self.conn.execute(
            "SELECT r.memory_pk, min(r.id), max(r.id) FROM memory_revisions r"
            " WHERE r.job_id IN (SELECT id FROM remember_jobs WHERE owner = %(owner)s AND memory_id = ANY(%(ids)s))"
            " AND NOT r.memory_pk = ANY(%(pks)s) GROUP BY r.memory_pk",
            {"owner": owner, "ids": list(ids), "pks": list(pks)},
        ).fetchall()
        return [(int(pk), int(first), int(last)) for pk, first, last in rows]

    def drop_revisions(self, memory_pk: int, first: int, last: int) -> None:
        self.conn.execute(
            "DELETE FROM memory_revisions WHERE memory_pk = %s AND id BETWEEN %s AND %s", (memory_pk, first, last)
        )

    def erase_jobs_of(self, owner: str, ids: Sequence[str], now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB} WHERE owner = %s AND memory_id = ANY(%s)", (now, owner, list(ids))
        ).rowcount

    def erase_queued(self, seqs: Sequence[int], memory_id: str | None, now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done', memory_id = COALESCE(%s, memory_id)"
            " WHERE status = 'queued' AND seq = ANY(%s)",
            (now, memory_id, list(seqs)),
        ).rowcount

    def erase_job(self, owner: str, job_id: str, now: float) -> int:
        return self.conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done' WHERE owner = %s AND id = %s", (now, owner, job_id)
        ).rowcount

    def erase_memories(self, lane: int, pks: Sequence[int], now: float) -> None:
        conn = self.conn
        conn.execute("DELETE FROM memory_revisions WHERE memory_pk = ANY(%s)", (list(pks),))
        conn.execute("DELETE FROM deferred_nominations WHERE memory_pk = ANY(%s)", (list(pks),))
        vectors.drop(conn, pks)
        conn.execute(
            "UPDATE memories SET body = '', norm_key = '', status = 'forgotten', vector_model = NULL, tsv = NULL,"
            " doc_len = 0, updated_at = %s WHERE pk = ANY(%s)",
            (now, list(pks)),
        )

    def add_tombstones(self, owner: str, namespace: str, rows: Sequence[tuple[str, int]], now: float) -> None:
        for mid, jobs in rows:
            self.conn.execute(
                "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (memory_id) DO UPDATE SET owner = EXCLUDED.owner, namespace = EXCLUDED.namespace,"
                " jobs = EXCLUDED.jobs, forgotten_at = EXCLUDED.forgotten_at",
                (mid, owner, namespace, jobs, now),
            )

    def superseders(self, owner: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT id, superseded_by FROM memories WHERE owner = %s AND id = ANY(%s) AND superseded_by IS NOT NULL"
            " ORDER BY pk",
            (owner, list(ids)),
        ).fetchall()
        return [(mid, by) for mid, by in rows]

    def superseded_by_any(self, owner: str, by_ids: Sequence[str], live_at: float | None) -> list[tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT id, superseded_by FROM memories WHERE owner = %s AND status = 'retired' AND superseded_by = ANY(%s)"
            " AND (%s::double precision IS NULL OR expires_at IS NULL OR expires_at > %s) ORDER BY pk",
            (owner, list(by_ids), live_at, live_at),
        ).fetchall()
        return [(mid, by) for mid, by in rows]

    def repoint(self, owner: str, from_id: str, to_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE memories SET superseded_by = %s, updated_at = %s WHERE owner = %s AND status = 'retired'"
            " AND superseded_by = %s",
            (to_id, now, owner, from_id),
        )

    def supersede_notes(self, owner: str, memory_id: str) -> list[tuple[int, tuple[str, ...]]]:
        rows = self.conn.execute(
            "SELECT r.id, r.merged_ids FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
            " WHERE m.owner = %s AND m.id = %s AND r.decision = ANY(%s) ORDER BY r.id",
            (owner, memory_id, [SUPERSEDED, UNSUPERSEDED]),
        ).fetchall()
        return [(int(rid), tuple(merged.split(",")) if merged else ()) for rid, merged in rows]

    def rename_note(self, revision_id: int, merged_ids: Sequence[str]) -> None:
        self.conn.execute(
            "UPDATE memory_revisions SET merged_ids = %s WHERE id = %s", (",".join(merged_ids) or None, revision_id)
        )

    def supersede(self, owner: str, ids: Sequence[str], by_id: str, job_id: str | None, now: float) -> list[str]:
        return revisions.supersede(self.conn, owner, ids, by_id, job_id, now)

    def unsupersede(self, owner: str, memory_id: str, by_id: str) -> bool:
        return revisions.unsupersede(self.conn, owner, memory_id, by_id)

    def unretire(self, owner: str, memory_id: str, from_id: str) -> bool:
        return revisions.unretire(self.conn, owner, memory_id, from_id)

    def note(
        self, owner: str, memory_id: str, decision: str, job_id: str | None, merged_ids: Sequence[str], now: float
    ) -> None:
        revisions.note(self.conn, owner, memory_id, decision, job_id, merged_ids, now)

    def set_expiry(self, pk: int, expires_at: float | None) -> None:
        self.conn.execute("UPDATE memories SET expires_at = %s WHERE pk = %s", (expires_at, pk))

    def folded_job(self, owner: str, memory_id: str, job_id: str) -> FoldedJob | None:
        row = self.conn.execute(
            "SELECT namespace, lane_id, text, occurred_at, created_at, expires_at FROM remember_jobs"
            " WHERE id = %s AND owner = %s AND memory_id = %s AND status = 'done' AND text != ''",
            (job_id, owner, memory_id),
        ).fetchone()
        return None if row is None else FoldedJob(row[0], int(row[1]), row[2], row[3], row[4], row[5])

    def point_job(self, job_id: str, memory_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE remember_jobs SET decision = 'created', memory_id = %s, updated_at = %s WHERE id = %s",
            (memory_id, now, job_id),
        )
