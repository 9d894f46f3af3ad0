"""Is the store consistent? The PostgreSQL backend's `check`, in the reader's snapshot.

The rules the schema cannot state itself (foreign keys, CHECKs and unique indexes hold the
rest): the totals and word counts the triggers keep agree with the rows, every live memory has
its words indexed and no other does, vector rows belong to live memories of their lane, and the
journal and the memories agree on owners, lanes and outcomes. The SQLite backend checks more
(integrity_*.py); what it checks beyond these is listed in tests/postgres as still to port.
"""

from __future__ import annotations

from collections.abc import Iterator

from psycopg import Connection

from ...records import ANALYZED
from ...wording import agree, counted
from ..records import Problem, StoreCounts
from . import vectors, words

CAP = 20  # problems reported per code


def _rows(conn: Connection, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
    return conn.execute(sql + f" LIMIT {CAP}", params).fetchall()


def _lane_totals(conn: Connection) -> Iterator[Problem]:
    for lane, kept, actual in _rows(
        conn,
        "SELECT l.id, (l.live_count, l.live_chars, l.live_tokens)::text, (coalesce(m.n, 0), coalesce(m.chars, 0),"
        " coalesce(m.tokens, 0))::text FROM lanes l LEFT JOIN (SELECT lane_id, count(*) AS n,"
        " sum(length(body)) AS chars, sum(doc_len) AS tokens FROM memories WHERE status = 'live' GROUP BY lane_id) m"
        " ON m.lane_id = l.id WHERE (l.live_count, l.live_chars, l.live_tokens)"
        " IS DISTINCT FROM (coalesce(m.n, 0), coalesce(m.chars, 0), coalesce(m.tokens, 0))",
    ):
        yield Problem("error", "lane_live_counts", f"keeps {kept}, its live memories make {actual}", "lanes", str(lane))


def _lane_terms(conn: Connection) -> Iterator[Problem]:
    # The word itself is never shown: it is a word of someone's memory.
    for lane, kept, actual in _rows(
        conn,
        "WITH actual AS (SELECT m.lane_id, u.lexeme, count(*) AS docs FROM memories m CROSS JOIN LATERAL unnest(m.tsv) u"
        " WHERE m.status = 'live' GROUP BY m.lane_id, u.lexeme)"
        " SELECT coalesce(t.lane_id, a.lane_id), coalesce(t.docs, 0), coalesce(a.docs, 0)"
        " FROM lane_terms t FULL JOIN actual a ON a.lane_id = t.lane_id AND a.lexeme = t.lexeme"
        " WHERE t.docs IS DISTINCT FROM a.docs",
    ):
        yield Problem(
            "error",
            "lane_term_counts",
            f"counts {counted(kept, 'memory')} holding a word {actual} {agree(actual, 'holds', 'hold')}",
            "lane_terms",
            str(lane),
        )


def _words(conn: Connection) -> Iterator[Problem]:
    for (memory,) in _rows(conn, "SELECT id FROM memories WHERE status = 'live' AND tsv IS NULL AND body != ''"):
        yield Problem("error", "fts_row_missing", "live, but its words are not indexed", "memories", memory)
    stale = _rows(conn, f"SELECT count(*) FROM memories WHERE status = 'live' AND words_version < {words.VERSION}")
    if stale and stale[0][0]:
        # A replica of an older version wrote them after this one opened: the next open re-tokenizes them.
        yield Problem(
            "info",
            "words_version",
            f"{counted(stale[0][0], 'memory')} indexed by an older tokenizer; re-tokenized when a server opens the"
            " database next",
            "memories",
        )


def _vectors(conn: Connection) -> Iterator[Problem]:
    for table in vectors.tables(conn):
        for memory, status, why in _rows(
            conn,
            f"SELECT m.id, m.status, CASE WHEN m.status != 'live' THEN 'not live' ELSE 'in another lane' END"
            f" FROM {table} v JOIN memories m ON m.pk = v.pk WHERE m.status != 'live' OR m.lane_id != v.lane_id",
        ):
            yield Problem(
                "error", "vector_row_orphan", f"{table} holds a vector of a memory {why} ({status})", "memories", memory
            )
    current = vectors.vector_table(conn)
    if current is not None:
        for (memory,) in _rows(
            conn,
            f"SELECT m.id FROM memories m WHERE m.status = 'live' AND m.vector_model IS NOT NULL"
            f" AND m.vector_model != %s AND NOT EXISTS (SELECT 1 FROM {current} v WHERE v.pk = m.pk)",
            (vectors.UNEMBEDDABLE,),
        ):
            yield Problem("error", "vector_row_missing", "marked embedded, but has no vector", "memories", memory)


def _journal(conn: Connection) -> Iterator[Problem]:
    for job, memory in _rows(
        conn,
        # An analyze request holds its source text and is never curated: done, and in no memory.
        "SELECT j.id, j.memory_id FROM remember_jobs j WHERE j.status = 'done' AND j.decision != 'forgotten'"
        " AND NOT (j.decision = %s AND j.memory_id IS NULL) AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = j.memory_id AND m.owner = j.owner"
        " AND m.lane_id = j.lane_id)",
        (ANALYZED,),
    ):
        yield Problem(
            "error", "done_job_without_memory", f"names memory {memory}, not of its lane", "remember_jobs", job
        )
    for memory, job in _rows(
        conn,
        "SELECT m.id, m.source_job_id FROM memories m WHERE NOT EXISTS (SELECT 1 FROM remember_jobs j"
        " WHERE j.id = m.source_job_id AND j.owner = m.owner)",
    ):
        yield Problem("error", "memory_without_source", f"its source job {job} is not the owner's", "memories", memory)
    for job, lane in _rows(
        conn,
        "SELECT j.id, j.lane_id FROM remember_jobs j JOIN lanes l ON l.id = j.lane_id"
        " WHERE (l.owner, l.namespace) IS DISTINCT FROM (j.owner, j.namespace)",
    ):
        yield Problem(
            "error", "job_outside_its_lane", f"lane {lane} is another owner's or namespace's", "remember_jobs", job
        )
    for memory, lane in _rows(
        conn,
        "SELECT m.id, m.lane_id FROM memories m JOIN lanes l ON l.id = m.lane_id"
        " WHERE (l.owner, l.namespace) IS DISTINCT FROM (m.owner, m.namespace)",
    ):
        yield Problem(
            "error", "memory_outside_its_lane", f"lane {lane} is another owner's or namespace's", "memories", memory
        )
    for memory, into in _rows(
        conn,
        "SELECT m.id, m.retired_into FROM memories m WHERE m.status = 'retired' AND m.superseded_by IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM memories t WHERE t.id = m.retired_into AND t.owner = m.owner)",
    ):
        yield Problem("error", "retired_without_target", f"retired into {into}, not the owner's", "memories", memory)
    # A superseded memory is retired, merged into nothing, and replaced by a memory of its owner.
    for memory, status, by in _rows(
        conn,
        "SELECT m.id, m.status, m.superseded_by FROM memories m WHERE m.superseded_by IS NOT NULL"
        " AND m.status != 'forgotten' AND (m.status != 'retired' OR m.retired_into IS NOT NULL OR NOT EXISTS"
        " (SELECT 1 FROM memories b WHERE b.id = m.superseded_by AND b.owner = m.owner))",
    ):
        yield Problem(
            "error", "superseded_without_target", f"superseded by {by} ({status}), not the owner's", "memories", memory
        )
    for job, left in _rows(
        conn,
        "SELECT id, length(text) FROM remember_jobs WHERE decision = 'forgotten' AND text != ''",
    ):
        yield Problem("error", "forgotten_job_not_erased", f"keeps {left} characters of text", "remember_jobs", job)
    for memory, left in _rows(
        conn,
        "SELECT id, length(body) FROM memories WHERE status = 'forgotten' AND (body != '' OR tsv IS NOT NULL)",
    ):
        yield Problem("error", "forgotten_leftovers", f"keeps {left} characters of text", "memories", memory)
    for (count,) in conn.execute("SELECT count(*) FROM remember_jobs WHERE status = 'failed'").fetchall():
        if count:
            yield Problem("warning", "failed_jobs", f"{counted(count, 'job')} failed for good", "remember_jobs")
    for (count,) in conn.execute(
        "SELECT count(*) FROM memories WHERE status = 'live' AND vector_model IS NULL"
    ).fetchall():
        if count:
            yield Problem(
                "info",
                "unembedded",
                f"{counted(count, 'memory')} {agree(count, 'is', 'are')} still waiting for a vector",
                "memories",
            )


def store_counts(conn: Connection) -> StoreCounts:
    (lanes,) = conn.execute("SELECT count(*) FROM lanes").fetchone() or (0,)
    jobs = {s: int(c) for s, c in conn.execute("SELECT status, count(*) FROM remember_jobs GROUP BY status")}
    memories = {s: int(c) for s, c in conn.execute("SELECT status, count(*) FROM memories GROUP BY status")}
    table = vectors.vector_table(conn)
    (count,) = (conn.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,)) if table else (0,)
    (revisions,) = conn.execute("SELECT count(*) FROM memory_revisions").fetchone() or (0,)
    return StoreCounts(int(lanes), jobs, memories, int(count), int(revisions))


def check_store(conn: Connection) -> tuple[list[Problem], StoreCounts]:
    problems: list[Problem] = []
    for rule in (_lane_totals, _lane_terms, _words, _vectors, _journal):
        problems.extend(rule(conn))
    return problems, store_counts(conn)


def created_at(conn: Connection) -> float | None:
    """When the first migration ran: when this database was set up."""
    if conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone() != (True,):
        return None
    row = conn.execute("SELECT min(applied_at) FROM schema_migrations").fetchone()
    return float(row[0]) if row and row[0] is not None else None
