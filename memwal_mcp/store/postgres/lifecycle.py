"""Forget and undo on PostgreSQL: the two operations that change history on purpose.

Forget erases what the SQLite backend erases -- the memory's body and words, its previous
bodies, its vector, the text of every job that ended in it, of memories a CONSOLIDATE folded
into it, and of queued jobs repeating any of that text -- in one transaction, and keeps a
tombstone. Once it commits no live row holds the text (nor its words: lane_terms drops a word
no live memory of the lane holds). The old row versions stay in the table files until VACUUM
removes them, which the store runs right after (erasure.py); `wal_cleared` says whether it
could (a transaction holding an older snapshot keeps them).
Undo restores the body a memory had before its last change, as a new revision.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from psycopg import Connection

from ...errors import InvalidInput, NotFound
from ...normalize import norm_key, normalize_text
from ...records import SUPERSEDED, UNSUPERSEDED
from ..records import Forgotten, MemoryState, StoredCopy, nothing_undone
from . import memories, revisions, vectors


def _folded_into(conn: Connection, owner: str, memory_id: str) -> list[tuple[int, str]]:
    """(pk, id) of the memory and, recursively, of every memory of the same owner retired into it."""
    found: list[tuple[int, str]] = []
    frontier = [memory_id]
    while frontier:
        rows = conn.execute(
            "SELECT pk, id FROM memories WHERE owner = %s AND (id = ANY(%s) OR retired_into = ANY(%s)) ORDER BY pk",
            (owner, frontier, frontier),
        ).fetchall()
        known = {mid for _, mid in found}
        fresh = [(int(pk), mid) for pk, mid in rows if mid not in known]
        found.extend(fresh)
        frontier = [mid for _, mid in fresh if mid not in frontier]
    return found


def _queued_repeats(conn: Connection, owner: str, ids: list[str], pks: list[int]) -> list[int]:
    """Seqs of queued jobs whose normalized text equals any text being erased, in that text's lane."""
    texts = conn.execute(
        "SELECT lane_id, body FROM memories WHERE pk = ANY(%(pks)s)"
        " UNION ALL SELECT m.lane_id, r.body FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
        "  WHERE r.memory_pk = ANY(%(pks)s)"
        " UNION ALL SELECT lane_id, text FROM remember_jobs WHERE owner = %(owner)s AND memory_id = ANY(%(ids)s)",
        {"pks": pks, "ids": ids, "owner": owner},
    ).fetchall()
    erased = {(lane, normalize_text(text)) for lane, text in texts}
    lanes = sorted({lane for lane, _ in erased})
    queued = conn.execute(
        "SELECT seq, lane_id, text FROM remember_jobs WHERE lane_id = ANY(%s) AND status = 'queued'", (lanes,)
    ).fetchall()
    return [int(seq) for seq, lane, text in queued if (lane, normalize_text(text)) in erased]


def copies_of(conn: Connection, owner: str, lanes: Sequence[int], keys: Sequence[str]) -> list[StoredCopy]:
    """Every memory of the owner in the lanes with one of these normalized texts -- live, expired
    or superseded -- and every such queued job (see the SQLite backend's lifecycle.copies_of)."""
    wanted = set(keys)
    if not wanted or not lanes:
        return []
    found = [
        StoredCopy(*row)
        for row in conn.execute(
            "SELECT id, norm_key, body, expires_at, superseded_by FROM memories WHERE owner = %s"
            " AND (status = 'live' OR (status = 'retired' AND superseded_by IS NOT NULL)) AND lane_id = ANY(%s)"
            " AND norm_key = ANY(%s) ORDER BY created_at, id",
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


def forget_memory(conn: Connection, owner: str, memory_id: str, lock: str, retired_too: bool = False) -> Forgotten:
    """Erase the memory (or the fact a job id names) and what it holds, in one transaction."""
    with conn.transaction():
        conn.execute(lock)
        if memory_id.startswith("j_"):
            return _erase_job(conn, owner, memory_id, retired_too)
        return _erase(conn, owner, memory_id, retired_too)


def _erase(conn: Connection, owner: str, memory_id: str, retired_too: bool) -> Forgotten:
    found = conn.execute(
        "SELECT namespace, status, retired_into, superseded_by FROM memories WHERE owner = %s AND id = %s",
        (owner, memory_id),
    ).fetchone()
    if found is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    namespace, status, into, superseded_by = found
    # A superseded memory's text is in no other body: it can be forgotten on its own.
    if status == "retired" and superseded_by is None and not retired_too:
        raise InvalidInput(
            f"memory {memory_id!r} was merged into {into!r}, whose body holds its text: forget {into!r}, "
            f"or undo that merge (memwal-mcp undo {into}) and then forget {memory_id!r}"
        )
    if status == "forgotten":
        return Forgotten((), 0, already=True)
    targets = _folded_into(conn, owner, memory_id)
    ids = [mid for _, mid in targets]
    pks = [pk for pk, _ in targets]
    now = time.time()
    repeats = _queued_repeats(conn, owner, ids, pks)
    _scrub_merges_undone(conn, owner, ids, pks)
    jobs = conn.execute(
        f"UPDATE remember_jobs SET {_ERASE_JOB} WHERE owner = %s AND memory_id = ANY(%s)", (now, owner, ids)
    ).rowcount
    if repeats:
        jobs += conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done', memory_id = %s"
            " WHERE status = 'queued' AND seq = ANY(%s)",
            (now, memory_id, repeats),
        ).rowcount
    conn.execute("DELETE FROM memory_revisions WHERE memory_pk = ANY(%s)", (pks,))
    conn.execute("DELETE FROM deferred_nominations WHERE memory_pk = ANY(%s)", (pks,))
    vectors.drop(conn, pks)
    conn.execute(
        "UPDATE memories SET body = '', norm_key = '', status = 'forgotten', vector_model = NULL, tsv = NULL,"
        " doc_len = 0, updated_at = %s WHERE pk = ANY(%s)",
        (now, pks),
    )
    for mid in ids:
        conn.execute(
            "INSERT INTO forgotten (memory_id, owner, namespace, jobs, forgotten_at) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (memory_id) DO UPDATE SET owner = EXCLUDED.owner, namespace = EXCLUDED.namespace,"
            " jobs = EXCLUDED.jobs, forgotten_at = EXCLUDED.forgotten_at",
            (mid, owner, namespace, jobs if mid == memory_id else 0, now),
        )
    restored = _unsupersede_replaced_by(conn, owner, ids, now)
    return Forgotten((memory_id, *(mid for mid in ids if mid != memory_id)), jobs, restored=restored)


def _unsupersede_replaced_by(conn: Connection, owner: str, ids: Sequence[str], now: float) -> tuple[str, ...]:
    """The memories these (being erased) superseded, live again as undoing the supersede brings
    them back, unless past their expiry; an erased memory superseded itself hands what it
    replaced to what replaced it (see the SQLite backend's lifecycle)."""
    erased = set(ids)
    successors = {
        mid: by
        for mid, by in conn.execute(
            "SELECT id, superseded_by FROM memories WHERE owner = %s AND id = ANY(%s) AND superseded_by IS NOT NULL"
            " ORDER BY pk",
            (owner, list(ids)),
        ).fetchall()
        if by not in erased
    }
    for mid, by in successors.items():
        _repoint(conn, owner, mid, by, now)
    current = [mid for mid in ids if mid not in successors]
    if not current:
        return ()
    rows = conn.execute(
        "SELECT id, superseded_by FROM memories WHERE owner = %s AND status = 'retired' AND superseded_by = ANY(%s)"
        " AND (expires_at IS NULL OR expires_at > %s) ORDER BY pk",
        (owner, current, now),
    ).fetchall()
    return tuple(old for old, by_id in rows if revisions.unsupersede(conn, owner, old, by_id))


def _repoint(conn: Connection, owner: str, erased_id: str, by_id: str, now: float) -> None:
    """What `erased_id` superseded is superseded by `by_id` now, and `by_id`'s supersede
    revisions name it instead of the erased one."""
    moved = [
        mid
        for (mid,) in conn.execute(
            "SELECT id FROM memories WHERE owner = %s AND status = 'retired' AND superseded_by = %s ORDER BY pk",
            (owner, erased_id),
        ).fetchall()
    ]
    if not moved:
        return
    conn.execute(
        "UPDATE memories SET superseded_by = %s, updated_at = %s WHERE owner = %s AND status = 'retired'"
        " AND superseded_by = %s",
        (by_id, now, owner, erased_id),
    )
    notes = conn.execute(
        "SELECT r.id, r.merged_ids FROM memory_revisions r JOIN memories m ON m.pk = r.memory_pk"
        " WHERE m.owner = %s AND m.id = %s AND r.decision = ANY(%s)",
        (owner, by_id, [SUPERSEDED, UNSUPERSEDED]),
    ).fetchall()
    for revision_id, merged in notes:
        names = merged.split(",") if merged else []
        if erased_id in names:
            renamed = [new for name in names for new in (moved if name == erased_id else [name])]
            conn.execute(
                "UPDATE memory_revisions SET merged_ids = %s WHERE id = %s",
                (",".join(dict.fromkeys(renamed)), revision_id),
            )


def _scrub_merges_undone(conn: Connection, owner: str, ids: Sequence[str], pks: Sequence[int]) -> None:
    """Another memory's revisions from the time one of these memories' jobs was merged into it
    (a merge that an undo split back out): their bodies hold the fact being forgotten. Each
    such memory loses the revisions from that merge's to its undo's, both included."""
    conn.execute(
        "WITH spans AS (SELECT r.memory_pk, min(r.id) AS first, max(r.id) AS last FROM memory_revisions r"
        "  WHERE r.job_id IN (SELECT id FROM remember_jobs WHERE owner = %(owner)s AND memory_id = ANY(%(ids)s))"
        "  AND NOT r.memory_pk = ANY(%(pks)s) GROUP BY r.memory_pk)"
        " DELETE FROM memory_revisions d USING spans s"
        " WHERE d.memory_pk = s.memory_pk AND d.id BETWEEN s.first AND s.last",
        {"owner": owner, "ids": list(ids), "pks": list(pks)},
    )


def _erase_job(conn: Connection, owner: str, job_id: str, retired_too: bool) -> Forgotten:
    found = conn.execute(
        "SELECT lane_id, text, decision, memory_id FROM remember_jobs WHERE owner = %s AND id = %s", (owner, job_id)
    ).fetchone()
    if found is None:
        raise NotFound(f"no memory or job with id {job_id!r}")
    lane, text, decision, memory_id = found
    if decision == "forgotten":
        return Forgotten((), 0, already=True, via_job=job_id)
    if memory_id is None:
        return _erase_queued(conn, owner, job_id, lane, text)
    return replace(_erase(conn, owner, memory_id, retired_too), via_job=job_id)


def _erase_queued(conn: Connection, owner: str, job_id: str, lane: int, text: str) -> Forgotten:
    wanted = normalize_text(text)
    queued = conn.execute(
        "SELECT seq, text FROM remember_jobs WHERE lane_id = %s AND status = 'queued' AND id != %s", (lane, job_id)
    ).fetchall()
    seqs = [int(seq) for seq, other in queued if normalize_text(other) == wanted]
    now = time.time()
    jobs = conn.execute(
        f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done' WHERE owner = %s AND id = %s", (now, owner, job_id)
    ).rowcount
    if seqs:
        jobs += conn.execute(
            f"UPDATE remember_jobs SET {_ERASE_JOB}, status = 'done' WHERE status = 'queued' AND seq = ANY(%s)",
            (now, seqs),
        ).rowcount
    return Forgotten((), jobs, via_job=job_id)


_FOLDING = ("updated", "consolidated", "appended")


def undo_last_change(conn: Connection, owner: str, memory_id: str, lock: str) -> tuple[str, list[str]]:
    """Restore the body before the last change as a new revision (see the SQLite backend's
    lifecycle.undo_last_change for what comes back with it)."""
    with conn.transaction():
        conn.execute(lock)
        found = memories.memory_by_id(conn, owner, memory_id)
        if found is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        row, status, _ = found
        if status != "live":
            raise InvalidInput(f"memory {memory_id!r} is {status}; only a live memory can be undone")
        history = revisions.revisions(conn, row.pk)
        if not history:
            raise InvalidInput(f"memory {memory_id!r} has no change to undo")
        undoable = history[0]
        now = time.time()
        listed = list(undoable.merged_ids)
        restored: list[str] = []
        if undoable.decision == SUPERSEDED:  # the body stayed; what it replaced comes back
            restored = [i for i in listed if revisions.unsupersede(conn, owner, i, memory_id)]
            if not restored:
                raise nothing_undone(memory_id, "superseded", [(i, _state(conn, owner, i)) for i in listed])
            revisions.note(conn, owner, memory_id, UNSUPERSEDED, undoable.job_id, restored, now)
            return undoable.body, restored
        if undoable.decision == UNSUPERSEDED:  # redo: replaced again
            if not revisions.supersede(conn, owner, listed, memory_id, undoable.job_id, now):
                raise nothing_undone(memory_id, "brought back", [(i, _state(conn, owner, i)) for i in listed])
            return undoable.body, []
        if undoable.decision == "undone":
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
            pk=row.pk,
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
        # The expiry it had with that body comes back with it: a merge that renewed an expired
        # fact, undone, leaves it expired.
        conn.execute("UPDATE memories SET expires_at = %s WHERE pk = %s", (undoable.expires_at, row.pk))
    return undoable.body, restored if decision == "undone" else []


def _state(conn: Connection, owner: str, memory_id: str) -> MemoryState | None:
    found = memories.memory_by_id(conn, owner, memory_id)
    return None if found is None else (found[1], found[2], found[0].superseded_by)


def _split_proposal(conn: Connection, owner: str, memory_id: str, job_id: str, now: float) -> str | None:
    job = conn.execute(
        "SELECT namespace, lane_id, text, occurred_at, created_at, expires_at FROM remember_jobs"
        " WHERE id = %s AND owner = %s AND memory_id = %s AND status = 'done' AND text != ''",
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
        "UPDATE remember_jobs SET decision = 'created', memory_id = %s, updated_at = %s WHERE id = %s",
        (split, now, job_id),
    )
    conn.execute("UPDATE memories SET expires_at = %s WHERE id = %s", (expires_at, split))
    return split
