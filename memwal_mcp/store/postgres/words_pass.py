"""Re-tokenize the memories an older words.py VERSION indexed, when the store opens.

The SQL migrations cannot: the words are made in Python (words.py). A lane at a time, in one
transaction under the write lock (no curation or forget of any replica writes meanwhile, so the
lane's word counts made at the end are exact): its stale live memories get their tsvector anew
(with the lane_terms row trigger off for the transaction: migration 008), then the lane's
lane_terms are counted again from its live memories. A crash leaves whole lanes done; the next
open does the rest. Replicas starting at once each take the write lock per lane and find nothing
left in the lanes another finished. The lengths stay: stemming never changes a token count.
"""

from __future__ import annotations

import logging
import time

from psycopg import Connection

from .connection import WRITE_LOCK
from .words import VERSION, document

log = logging.getLogger(__name__)

BATCH = 2_000


def stale_lanes(conn: Connection) -> list[int]:
    rows = conn.execute(
        "SELECT DISTINCT lane_id FROM memories WHERE status = 'live' AND words_version < %s ORDER BY lane_id",
        (VERSION,),
    ).fetchall()
    return [int(row[0]) for row in rows]


def retokenize(conn: Connection) -> int:
    """Bring every live memory's words to this VERSION; how many were rewritten."""
    lanes = stale_lanes(conn)
    if not lanes:
        return 0
    began, done = time.monotonic(), 0
    for lane in lanes:
        done += _lane(conn, lane)
    log.info(
        "PostgreSQL: %d memories in %d lanes re-tokenized to words version %d in %.1f s",
        done,
        len(lanes),
        VERSION,
        time.monotonic() - began,
    )
    return done


def _lane(conn: Connection, lane: int) -> int:
    done = 0
    with conn.transaction():
        conn.execute(WRITE_LOCK)
        conn.execute("SET LOCAL memwal.words_pass = 'on'")
        while True:
            rows = conn.execute(
                "SELECT pk, body FROM memories WHERE lane_id = %s AND status = 'live' AND words_version < %s"
                " ORDER BY pk LIMIT %s",
                (lane, VERSION, BATCH),
            ).fetchall()
            if not rows:
                break
            pks = [int(pk) for pk, _ in rows]
            documents = [document(body)[0] for _, body in rows]
            conn.execute(
                "UPDATE memories m SET tsv = v.tsv::tsvector, words_version = %s"
                " FROM unnest(%s::bigint[], %s::text[]) AS v(pk, tsv) WHERE m.pk = v.pk",
                (VERSION, pks, documents),
            )
            done += len(rows)
        conn.execute("DELETE FROM lane_terms WHERE lane_id = %s", (lane,))
        conn.execute(
            "INSERT INTO lane_terms (lane_id, lexeme, docs)"
            " SELECT m.lane_id, u.lexeme, count(*) FROM memories m, unnest(m.tsv) u"
            " WHERE m.lane_id = %s AND m.tsv IS NOT NULL GROUP BY m.lane_id, u.lexeme ORDER BY u.lexeme",
            (lane,),
        )
    return done
