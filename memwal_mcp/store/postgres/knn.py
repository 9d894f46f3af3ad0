"""kNN over one lane's vectors: through its HNSW index when it has one, else an exact scan.

A search runs on a connection of its own (contract.VectorSearch needs none from the caller and
may run on any thread beside other work) and sees the memories that existed when it was
obtained: those with a key up to the lane's largest then, which keeps a search taken before a
write from returning what the write added.

With an index (lane_indexes.py) a query asks the graph for its k nearest with
`hnsw.ef_search = max(400, k)` candidates, as an unprepared statement naming the lane as a
literal: a prepared statement's generic plan could not use the partial index. The graph may
yield fewer than k rows (rows added after the search was obtained are filtered out after the
graph was walked): then the lane is scanned exactly, so a search never returns fewer than k
rows when k exist. Without an index, for more rows than ef_search can give, or when the caller
asks (`exact=True`: recall does when its word matches show the graph missed a neighbour), the
scan is exact: every row of the lane by cosine distance (`<=>`), ties by key.
"""

from __future__ import annotations

import numpy as np
from psycopg import Connection
from psycopg_pool import ConnectionPool

from ..contract import VectorMatch, VectorSearch
from . import lane_indexes
from .vectors import as_vector, vector_space


class LaneSearch:
    """kNN over one lane on a pooled connection of its own (see the module docstring)."""

    __slots__ = ("_pool", "_table", "_lane", "_upto", "indexed")

    def __init__(self, pool: ConnectionPool, table: str, lane: int, upto: int, indexed: bool) -> None:
        self._pool, self._table, self._lane, self._upto = pool, table, lane, upto
        self.indexed = indexed  # the lane had a usable HNSW index when the search was obtained

    def __call__(
        self, queries: np.ndarray, k: int, min_score: float | None = None, exact: bool = False
    ) -> list[list[VectorMatch]]:
        if k <= 0:
            return [[] for _ in range(len(queries))]
        found: list[list[VectorMatch]] = []
        with self._pool.connection() as conn:
            for query in queries:
                vector = as_vector(query)
                graph = self.indexed and not exact and k <= lane_indexes.EF_SEARCH_MAX
                matches = self._graph(conn, vector, k) if graph else None
                if matches is None:
                    matches = self._exact(conn, vector, k, min_score)
                if min_score is not None:  # the distance bound is in float8; the cosine is what callers compare
                    matches = [m for m in matches if m.cosine >= min_score]
                found.append(matches)
        return found

    def _graph(self, conn: Connection, vector: np.ndarray, k: int) -> list[VectorMatch] | None:
        """The k nearest by the lane's index, or None when it yields fewer than k."""
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {lane_indexes.ef_search(k)}")
            # A plan that sorts the lane (its rows found by the lane's btree) is the exact scan,
            # which the planner may price below the graph's on a fresh or small lane's
            # statistics: only the graph gives the order without a sort.
            conn.execute("SET LOCAL enable_sort = off")
            rows = conn.execute(
                lane_indexes.knn_sql(self._table, self._lane),
                {"q": vector, "upto": self._upto, "k": k},
                prepare=False,
            ).fetchall()
        if len(rows) < k:
            return None
        matches = [VectorMatch(int(pk), float(cosine)) for pk, cosine in rows]
        matches.sort(key=lambda m: (-m.cosine, m.pk))  # ties by key, as the exact scan orders them
        return matches

    def _exact(self, conn: Connection, vector: np.ndarray, k: int, min_score: float | None) -> list[VectorMatch]:
        sql = (
            f"SELECT pk, 1 - (embedding <=> %(q)s) FROM {self._table}"
            " WHERE lane_id = %(lane)s AND pk <= %(upto)s"
            + (" AND embedding <=> %(q)s <= %(most)s" if min_score is not None else "")
            + " ORDER BY embedding <=> %(q)s, pk LIMIT %(k)s"
        )
        params = {
            "q": vector,
            "lane": self._lane,
            "upto": self._upto,
            "k": k,
            "most": 1.0 - min_score if min_score is not None else None,
        }
        if not self.indexed:
            rows = conn.execute(sql, params).fetchall()
        else:
            # The planner could walk the lane's graph for the first sort key and sort ties
            # after it: not exact. An index scan is what the graph offers, so none is allowed.
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")
                rows = conn.execute(sql, params, prepare=False).fetchall()
        return [VectorMatch(int(pk), float(cosine)) for pk, cosine in rows]


def _no_vectors(
    queries: np.ndarray, k: int, min_score: float | None = None, exact: bool = False
) -> list[list[VectorMatch]]:
    return [[] for _ in range(len(queries))]


def vector_search(conn: Connection, pool: ConnectionPool, lane: int) -> VectorSearch:
    space = vector_space(conn)
    if space is None:
        return _no_vectors
    row = conn.execute("SELECT max(pk) FROM memories WHERE lane_id = %s AND status = 'live'", (lane,)).fetchone()
    upto = int(row[0]) if row and row[0] is not None else 0
    return LaneSearch(pool, space[0], lane, upto, lane_indexes.usable(conn, space[0], lane))
