"""Forget and undo: the two operations that change history on purpose.

Forget erases content -- the memory's body, its previous bodies, the text of every
job that ended in it, of memories a CONSOLIDATE folded into it, and of queued jobs
repeating any of that text -- and leaves a tombstone. With secure_delete on
(connection.py) and FTS5's secure-delete option, the erased text does not linger in
free pages or in the full-text index; a TRUNCATE checkpoint then removes the older
copies the write-ahead log still holds.
Undo restores the body a memory had before its last change, as a new revision.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import replace

from ...errors import InvalidInput, NotFound
from ...normalize import norm_key, normalize_text
from ...records import SUPERSEDED, UNSUPERSEDED
from ..records import Forgotten, StoredCopy
from . import fts, memories, revisions, vectors
from .connection import BUSY_TIMEOUT_MS, truncate_wal
from .database import transaction

log = logging.getLogger(__name__)


def _folded_into(conn: sqlite3.Connection, owner: str, memory_id: str) -> list[tuple[int, str]]:
    """(rowid, id) of the memory and, recursively, of every memory of the same owner retired into it.
    The owner filter is the wall: a row of another owner naming this id (only a damaged or hostile
    store holds one) is never erased with it."""
    found: list[tuple[int, str]] = []
    frontier = [memory_id]
    while frontier:
        marks = ",".join("?" * len(frontier))
        rows = conn.execute(
            f"SELECT rowid, id FROM memories WHERE owner = ? AND (id IN ({marks}) OR retired_into IN ({marks}))",
            (owner, *frontier, *frontier),
        ).fetchall()
        known = {mid for _, mid in found}
        fresh = [(rowid, mid) for rowid, mid in rows if mid not in known]
        found.extend(fresh)
        frontier = [mid for _, mid in fresh if mid not in frontier]
    return found


def _queued_repeats(conn: sqlite3.Connection, owner: str, ids: list[str], rowids: list[int]) -> list[int]:
    """Seqs of queued jobs whose normalized text equals any text being erased, in that text's lane.

    Without this, a repeat filed just before the forget (or one a worker has read but not
    applied yet) would be curated after it, into a new memory: the fact forgotten, back.
    """
    row_marks, id_marks = ",".join("?" * len(rowids)), ",".join("?" * len(ids))
    texts = conn.execute(
        f"SELECT lane_id, body FROM memories WHERE rowid IN ({row_marks})"
        f" UNION ALL SELECT m.lane_id, r.body FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
        f"  WHERE r.memory_rowid IN ({row_marks})"
        f" UNION ALL SELECT lane_id, text FROM remember_jobs WHERE owner = ? AND memory_id IN ({id_marks})",
        (*rowids, *rowids, owner, *ids),
    ).fetchall()
    erased = {(lane, normalize_text(text)) for lane, text in texts}
    lanes = sorted({lane for lane, _ in erased})
    queued = conn.execute(
        f"SELECT seq, lane_id, text FROM remember_jobs WHERE lane_id IN ({','.join('?' * len(lanes))})"
        " AND status = 'queued'",
        lanes,
    ).fetchall()
    return [seq for seq, lane, text in queued if (lane, normalize_text(text)) in erased]


def copies_of(conn: sqlite3.Connection, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
    """Every memory of the owner in the lanes whose normalized text has one of the norm_key()s --
    live, expired or superseded: each still holds the text -- and every queued job: what recall
    collapsed into one hit, so what a forget of that hit must erase, or the fact comes straight
    back. A memory merged into another is not a copy: its text lives on in that body, and
    forgetting that memory erases it."""
    wanted = set(keys)
    if not wanted or not lanes:
        return []
    lane_marks = ",".join("?" * len(lanes))
    found = [
        StoredCopy(*row)
        for row in conn.execute(
            f"SELECT id, norm_key, body, expires_at, superseded_by FROM memories WHERE owner = ?"
            f" AND (status = 'live' OR (status = 'retired' AND superseded_by IS NOT NULL)) AND lane_id IN ({lane_marks})"
            f" AND norm_key IN ({','.join('?' * len(wanted))}) ORDER BY created_at, id",
            (owner, *lanes, *wanted),
        )
    ]
    for job_id, text, expires_at in conn.execute(
        f"SELECT id, text, expires_at FROM remember_jobs WHERE owner = ? AND status = 'queued'"
        f" AND lane_id IN ({lane_marks}) ORDER BY seq",
        (owner, *lanes),
    ):
        key = norm_key(text)
        if key in wanted:
            found.append(StoredCopy(job_id, key, text, expires_at))
    return found


def forget_memory(conn: sqlite3.Connection, owner: str, memory_id: str, retired_too: bool = False) -> Forgotten:
    """Erase the memory and what it holds in one transaction, then empty the write-ahead log,
    so that when this returns no file holds the text (a SIGKILL right after changes nothing).
    A reader on an older snapshot can keep the log from being emptied within the bounded wait:
    `wal_cleared` is then False and the caller must say so and retry (Database.owe_wal_truncation).

    A memory merged into another is refused unless `retired_too` (an import replaying the
    tombstones of the database it came from).

    A job id (`j_...`, what recall shows for a fact still queued) names the fact too: a queued
    job is erased; a job already curated forgets the memory it became."""
    done = (
        _erase_job(conn, owner, memory_id, retired_too)
        if memory_id.startswith("j_")
        else _erase(conn, owner, memory_id, retired_too)
    )
    if done.already:
        return done
    cleared = truncate_wal(conn)
    if not cleared:
        log.warning(
            "forgot %s, but another connection to this database (a reader holding an older snapshot) kept "
            "its write-ahead log from being emptied within %.0f s: earlier copies of the text stay in the -wal "
            "file until that connection lets go and a checkpoint empties it",
            memory_id,
            BUSY_TIMEOUT_MS / 1000,
        )
    return replace(done, wal_cleared=cleared)


def _erase(conn: sqlite3.Connection, owner: str, memory_id: str, retired_too: bool) -> Forgotten:
    with transaction(conn):
        row = conn.execute(
            "SELECT namespace, status, lane_id, retired_into, superseded_by FROM memories WHERE owner = ? AND id = ?",
            (owner, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        namespace, status, lane, into, superseded_by = row
        # A superseded memory's text is in no other body: it can be forgotten on its own.
        if status == "retired" and superseded_by is None and not retired_too:
            # Its text lives on in the body it was merged into: erasing only this row would
            # report the fact forgotten while recall still finds it.
            raise InvalidInput(
                f"memory {memory_id!r} was merged into {into!r}, whose body holds its text: forget {into!r}, "
                f"or undo that merge (memwal-mcp undo {into}) and then forget {memory_id!r}"
            )
        if status == "forgotten":
            return Forgotten((), 0, already=True)
        targets = _folded_into(conn, owner, memory_id)
        ids = [mid for _, mid in targets]
        rowids = [rowid for rowid, _ in targets]
        id_marks = ",".join("?" * len(ids))
        row_marks = ",".join("?" * len(rowids))
        now = time.time()
        repeats = _queued_repeats(conn, owner, ids, rowids)
        # The erased jobs give up their idempotency keys: the same key later files a new fact
        # instead of replaying a job whose text is gone.
        erase = _ERASE_JOB
        _scrub_merges_undone(conn, owner, ids, rowids)
        jobs = conn.execute(
            f"UPDATE remember_jobs SET {erase} WHERE owner = ? AND memory_id IN ({id_marks})", (now, owner, *ids)
        ).rowcount
        if repeats:
            jobs += conn.execute(
                f"UPDATE remember_jobs SET {erase}, status = 'done', memory_id = ?"
                f" WHERE status = 'queued' AND seq IN ({','.join('?' * len(repeats))})",
                (now, memory_id, *repeats),
            ).rowcount
        conn.execute(f"DELETE FROM memory_revisions WHERE memory_rowid IN ({row_marks})", rowids)
        conn.execute(f"DELETE FROM deferred_nominations WHERE memory_rowid IN ({row_marks})", rowids)
        # Memories folded together belong to one owner, so one full-text table holds them all.
        fts.remove(conn, lane, rowids, optimize=not fts.secure_delete_supported(conn))
        table = vectors.vector_table(conn)
        if table is not None:
            conn.execute(f"DELETE FROM {table} WHERE rowid IN ({row_marks})", rowids)
        conn.execute(
            f"UPDATE memories SET body = '', norm_key = '', status = 'forgotten', vector_model = NULL,"
            f" updated_at = ? WHERE rowid IN ({row_marks})",
            (now, *rowids),
        )
        conn.executemany(
            "INSERT OR REPLACE INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (?, ?, ?, ?, ?)",
            [(mid, owner, namespace, jobs if mid == memory_id else 0, now) for mid in ids],
        )
        restored = _unsupersede_replaced_by(conn, owner, ids, now)
    if table is not None:  # after the commit: a big lane's sidecar file holds the vectors too
        vectors.erase_from_file(conn, table, lane, rowids)
    # The one asked for first.
    return Forgotten((memory_id, *(mid for mid in ids if mid != memory_id)), jobs, restored=restored)


def _unsupersede_replaced_by(conn: sqlite3.Connection, owner: str, ids: Sequence[str], now: float) -> tuple[str, ...]:
    """The memories these (being erased) superseded, live again as undoing the supersede brings
    them back: superseded by a memory that is gone, they would be in no recall, and the undo
    their history offers refused. One past its expiry stays as it is (recall would not show it
    live either; purge --expired erases it, expired_memories names it); a forgotten one too."""
    rows = conn.execute(
        f"SELECT id, superseded_by FROM memories WHERE owner = ? AND status = 'retired'"
        f" AND superseded_by IN ({','.join('?' * len(ids))}) AND (expires_at IS NULL OR expires_at > ?) ORDER BY rowid",
        (owner, *ids, now),
    ).fetchall()
    return tuple(old for old, by_id in rows if revisions.unsupersede(conn, owner, old, by_id))


def _scrub_merges_undone(conn: sqlite3.Connection, owner: str, ids: Sequence[str], rowids: Sequence[int]) -> None:
    """Another memory's revisions from the time one of these memories' jobs was merged into it
    (a merge that an undo split back out): their bodies hold the fact being forgotten. Each
    such memory loses the revisions from that merge's to its undo's, both included."""
    marks = ",".join("?" * len(ids))
    job_ids = [
        j
        for (j,) in conn.execute(
            f"SELECT id FROM remember_jobs WHERE owner = ? AND memory_id IN ({marks})", (owner, *ids)
        )
    ]
    if not job_ids:
        return
    forgotten = set(rowids)
    spans = conn.execute(
        f"SELECT memory_rowid, MIN(id), MAX(id) FROM memory_revisions WHERE job_id IN ({','.join('?' * len(job_ids))})"
        " GROUP BY memory_rowid",
        job_ids,
    ).fetchall()
    for memory_rowid, first, last in spans:
        if memory_rowid not in forgotten:
            conn.execute(
                "DELETE FROM memory_revisions WHERE memory_rowid = ? AND id BETWEEN ? AND ?",
                (memory_rowid, first, last),
            )


_ERASE_JOB = "text = '', decision = 'forgotten', error = NULL, idempotency_key = NULL, updated_at = ?"


def _erase_job(conn: sqlite3.Connection, owner: str, job_id: str, retired_too: bool) -> Forgotten:
    """Forget the fact a remember job filed: its memory once curated, else the job itself and the
    queued repeats of its text in its lane (curated later, they would bring the fact back)."""
    with transaction(conn):
        row = conn.execute(
            "SELECT lane_id, text, decision, memory_id FROM remember_jobs WHERE owner = ? AND id = ?",
            (owner, job_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no memory or job with id {job_id!r}")
        lane, text, decision, memory_id = row
        if decision == "forgotten":
            return Forgotten((), 0, already=True, via_job=job_id)
        if memory_id is None:
            return _erase_queued(conn, owner, job_id, lane, text)
    # Curated: its memory is the fact now (_erase checks its state again in its own transaction).
    return replace(_erase(conn, owner, memory_id, retired_too), via_job=job_id)


def _erase_queued(conn: sqlite3.Connection, owner: str, job_id: str, lane: int, text: str) -> Forgotten:
    """A job not curated (or failed): erased with the queued repeats of its text in its lane.
    Inside the caller's transaction."""
    wanted = normalize_text(text)
    queued = conn.execute(
        "SELECT seq, text FROM remember_jobs WHERE lane_id = ? AND status = 'queued' AND id != ?", (lane, job_id)
    ).fetchall()
    seqs = [seq for seq, other in queued if normalize_text(other) == wanted]
    # The worker's mark_done only finishes a job still queued: one it is curating now is withdrawn.
    jobs = conn.execute(
        f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done' WHERE owner = ? AND id = ?",
        (time.time(), owner, job_id),
    ).rowcount
    if seqs:
        jobs += conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done'"
            f" WHERE status = 'queued' AND seq IN ({','.join('?' * len(seqs))})",
            (time.time(), *seqs),
        ).rowcount
    return Forgotten((), jobs, via_job=job_id)


# Revisions whose change folded a proposal (its job) into the body: undoing one splits it out.
_FOLDING = ("updated", "consolidated", "appended")


def undo_last_change(conn: sqlite3.Connection, owner: str, memory_id: str) -> tuple[str, list[str]]:
    """Restore the body before the last change as a new revision, and keep everything remembered.

    Undoing a merge (UPDATE, CONSOLIDATE, append) brings back what it folded in: the memories a
    CONSOLIDATE retired, and the proposal itself, as its own live memory -- the restored body
    does not hold it, and a job that says "done" must end in a memory that does. The undo's
    revision lists them, so undoing the undo ("redone") folds them in again, and undoing that
    brings them back once more.

    Returns (restored body, ids of memories brought back). They get their vectors from the
    curation worker's backlog pass; recall scores them directly until then.
    """
    with transaction(conn):
        found = memories.memory_by_id(conn, owner, memory_id)
        if found is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        row, status, _ = found
        if status != "live":
            raise InvalidInput(f"memory {memory_id!r} is {status}; only a live memory can be undone")
        history = revisions.revisions(conn, row.pk)
        if not history:
            raise InvalidInput(f"memory {memory_id!r} has no change to undo")
        undoable = history[0]  # the newest previous body comes back
        now = time.time()
        listed = list(undoable.merged_ids)
        restored: list[str] = []
        if undoable.decision == SUPERSEDED:  # the body stayed; what it replaced comes back
            restored = [i for i in listed if revisions.unsupersede(conn, owner, i, memory_id)]
            revisions.note(conn, owner, memory_id, UNSUPERSEDED, undoable.job_id, restored, now)
            return undoable.body, restored
        if undoable.decision == UNSUPERSEDED:  # redo: replaced again
            revisions.supersede(conn, owner, listed, memory_id, undoable.job_id, now)
            return undoable.body, []
        if undoable.decision == "undone":
            # Redo: what the undo brought back is folded in again, as a CONSOLIDATE folds.
            for other in listed:
                got = memories.memory_by_id(conn, owner, other)
                if got is not None and got[1] == "live" and got[0].lane == row.lane:
                    revisions.retire(conn, got[0].pk, memory_id, now)
                    restored.append(other)
            decision = "redone"
        else:
            restored = [i for i in listed if revisions.unretire(conn, owner, i, memory_id)]
            if undoable.decision in _FOLDING and undoable.job_id:
                split = _split_proposal(conn, owner, memory_id, undoable.job_id, now)
                if split is not None:
                    restored.append(split)
            decision = "undone"
        revisions.replace_body(
            conn,
            rowid=row.pk,
            lane=row.lane,
            body=undoable.body,
            key=norm_key(undoable.body),
            vector=None,
            model_id=None,
            decision=decision,
            job_id=undoable.job_id,
            llm_model=None,
            guard=None,
            merged_ids=restored,
            now=now,
        )
    return undoable.body, restored if decision == "undone" else []


def _split_proposal(conn: sqlite3.Connection, owner: str, memory_id: str, job_id: str, now: float) -> str | None:
    """The proposal a merge folded into `memory_id`, as its own live memory (its vector queued),
    and its job pointing at it: the id, or None if the job no longer ends there."""
    job = conn.execute(
        "SELECT namespace, lane_id, text, occurred_at, created_at, expires_at FROM remember_jobs"
        " WHERE id = ? AND owner = ? AND memory_id = ? AND status = 'done' AND text != ''",
        (job_id, owner, memory_id),
    ).fetchone()
    if job is None:
        return None
    namespace, lane, text, occurred_at, created_at, expires_at = job
    _, split = memories.create_memory(
        conn,
        owner=owner,
        namespace=namespace,
        lane=lane,
        body=text,
        key=norm_key(text),
        source_job_id=job_id,
        vector=None,
        model_id=None,
        now=now,
        occurred_at=occurred_at,
        created_at=created_at,
    )
    conn.execute(
        "UPDATE remember_jobs SET decision = 'created', memory_id = ?, updated_at = ? WHERE id = ?",
        (split, now, job_id),
    )
    conn.execute("UPDATE memories SET expires_at = ? WHERE id = ?", (expires_at, split))
    return split
