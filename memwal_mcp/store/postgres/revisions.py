"""A memory's body after it was made: merges, consolidations, undo, and the revisions they keep.

Every such change is an index change too (the row's words, its vector row), made here in one
place inside the caller's transaction, as on SQLite.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from psycopg import Connection

from ...records import SUPERSEDED, Revision
from . import vectors, words


def replace_body(
    conn: Connection,
    *,
    pk: int,
    lane: int,
    body: str,
    key: str,
    vector: np.ndarray | None,
    model_id: str | None,
    decision: str,
    job_id: str | None,
    llm_model: str | None,
    guard: str | None,
    merged_ids: Sequence[str] = (),
    now: float,
) -> None:
    """Give a memory a new body, keeping the old one as a revision; re-index it."""
    found = conn.execute("SELECT body, expires_at FROM memories WHERE pk = %s", (pk,)).fetchone()
    if found is None:
        raise LookupError(f"no memory row {pk}")
    conn.execute(
        "INSERT INTO memory_revisions"
        " (memory_pk, body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (pk, found[0], decision, job_id, llm_model, guard, ",".join(merged_ids) or None, now, found[1]),
    )
    tsv, length = words.document(body)
    has_vector = vector is not None and vectors.vector_table(conn) is not None
    conn.execute(
        "UPDATE memories SET body = %s, norm_key = %s, vector_model = %s, updated_at = %s,"
        f" tsv = CASE WHEN status = 'live' THEN %s::tsvector END, doc_len = %s, words_version = {words.VERSION}"
        " WHERE pk = %s",
        (body, key, model_id if has_vector else None, now, tsv, length, pk),
    )
    vectors.drop(conn, [pk])
    if has_vector and vector is not None:
        vectors.put(conn, pk, lane, vector)


def retire(conn: Connection, pk: int, into_id: str, now: float) -> None:
    """Fold a memory into another (CONSOLIDATE): its body and history stay, it leaves the indexes."""
    conn.execute(
        "UPDATE memories SET status = 'retired', retired_into = %s, updated_at = %s, tsv = NULL"
        " WHERE pk = %s AND status = 'live'",
        (into_id, now, pk),
    )
    vectors.drop(conn, [pk])


def revisions(conn: Connection, pk: int) -> list[Revision]:
    rows = conn.execute(
        "SELECT body, decision, job_id, llm_model, guard, merged_ids, created_at, expires_at FROM memory_revisions"
        " WHERE memory_pk = %s ORDER BY id DESC",
        (pk,),
    ).fetchall()
    return [
        Revision(
            body, decision, job_id, llm_model, guard, tuple(merged.split(",")) if merged else (), created_at, expiry
        )
        for body, decision, job_id, llm_model, guard, merged, created_at, expiry in rows
    ]


def retired_into(conn: Connection, owner: str, memory_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM memories WHERE owner = %s AND retired_into = %s ORDER BY pk", (owner, memory_id)
    ).fetchall()
    return [r[0] for r in rows]


def unretire(conn: Connection, owner: str, memory_id: str, from_id: str) -> bool:
    """Bring back a memory a CONSOLIDATE retired into `from_id`; re-indexed, its vector comes later."""
    found = conn.execute(
        "SELECT pk, body FROM memories WHERE owner = %s AND id = %s AND status = 'retired' AND retired_into = %s",
        (owner, memory_id, from_id),
    ).fetchone()
    if found is None:
        return False
    tsv, length = words.document(found[1])
    conn.execute(
        "UPDATE memories SET status = 'live', retired_into = NULL, vector_model = NULL, updated_at = %s,"
        f" tsv = %s::tsvector, doc_len = %s, words_version = {words.VERSION} WHERE pk = %s",
        (time.time(), tsv, length, found[0]),
    )
    return True


# --- supersede ---------------------------------------------------------------


def supersede(
    conn: Connection, owner: str, memory_ids: Sequence[str], by_id: str, job_id: str | None, now: float
) -> list[str]:
    """Retire the owner's live memories among `memory_ids` as replaced by `by_id` (any namespace of
    the owner): body and history stay, they leave the indexes, and `by_id` gets a revision naming
    them, so undoing it brings them back. Returns those superseded (one merged or forgotten since
    the fact was filed is left as it is)."""
    wanted = list(dict.fromkeys(memory_ids))
    if not wanted:
        return []
    rows = conn.execute(
        "UPDATE memories SET status = 'retired', superseded_by = %s, updated_at = %s, tsv = NULL"
        " WHERE owner = %s AND id = ANY(%s) AND status = 'live' AND id != %s RETURNING pk, id",
        (by_id, now, owner, wanted, by_id),
    ).fetchall()
    vectors.drop(conn, [int(pk) for pk, _ in rows])
    done_ids = {memory_id for _, memory_id in rows}
    done = [memory_id for memory_id in wanted if memory_id in done_ids]
    if done:
        note(conn, owner, by_id, SUPERSEDED, job_id, done, now)
    return done


def unsupersede(conn: Connection, owner: str, memory_id: str, by_id: str) -> bool:
    """Bring back a memory `by_id` superseded; re-indexed, its vector comes from the worker's backlog pass."""
    found = conn.execute(
        "SELECT pk, body FROM memories WHERE owner = %s AND id = %s AND status = 'retired' AND superseded_by = %s",
        (owner, memory_id, by_id),
    ).fetchone()
    if found is None:
        return False
    tsv, length = words.document(found[1])
    conn.execute(
        "UPDATE memories SET status = 'live', superseded_by = NULL, vector_model = NULL, updated_at = %s,"
        f" tsv = %s::tsvector, doc_len = %s, words_version = {words.VERSION} WHERE pk = %s",
        (time.time(), tsv, length, found[0]),
    )
    return True


def note(
    conn: Connection,
    owner: str,
    memory_id: str,
    decision: str,
    job_id: str | None,
    merged_ids: Sequence[str],
    now: float,
) -> None:
    """A revision for a change that leaves the body as it is (a supersede, or its undo)."""
    conn.execute(
        "INSERT INTO memory_revisions (memory_pk, body, decision, job_id, merged_ids, created_at, expires_at)"
        " SELECT pk, body, %s, %s, %s, %s, expires_at FROM memories WHERE owner = %s AND id = %s",
        (decision, job_id, ",".join(merged_ids) or None, now, owner, memory_id),
    )


def superseded_by(conn: Connection, owner: str, memory_id: str) -> list[str]:
    """Ids of the owner's memories this one superseded and that still are."""
    rows = conn.execute(
        "SELECT id FROM memories WHERE owner = %s AND superseded_by = %s AND status = 'retired' ORDER BY pk",
        (owner, memory_id),
    ).fetchall()
    return [r[0] for r in rows]
