"""HNSW indexes for big lanes: which lanes get one, building and dropping them, their state.

An exact scan of a lane's vectors costs in proportion to the lane (60-90 ms at 100k here); an
HNSW graph answers in a few milliseconds. One graph over the whole vector table would answer a
lane-filtered query with whatever of its ef_search nearest rows belong to the lane, often fewer
than k. So each big lane gets a partial index of its own (`WHERE lane_id = <id>`), whose graph
holds that lane's rows only: its candidates are all the lane's, and the planner picks it when the
query names the lane as a literal (vectors.py). Small lanes stay exact: their scan is already fast
and an index per small lane would only cost writes.

A lane gets its index once it holds `[storage] hnsw_min_rows` live memories; it keeps it until it
falls below a quarter of that, so a lane near the threshold does not build and drop by turns.
Indexes are built with CREATE INDEX CONCURRENTLY (writes go on meanwhile) by whichever replica
holds the builder's advisory lock: one build at a time per database, never two of the same index.
A build that was interrupted (a killed replica, a cancelled statement) leaves an INVALID index,
which searches ignore; the next builder drops and rebuilds it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from psycopg import Connection

from ..records import Problem
from . import vectors
from .connection import ADVISORY_NAMESPACE

log = logging.getLogger(__name__)

# [storage] hnsw_min_rows' default (config.py): a lane this big gets an index.
DEFAULT_MIN_ROWS = 20000
# Session-level advisory lock: held by the one connection building or dropping lane indexes.
BUILD_LOCK = 3
# hnsw.ef_search for a query of k: at least this many candidates, and k when it asks for more.
EF_SEARCH_MIN = 400
# pgvector's largest ef_search; a search for more rows than this is exact.
EF_SEARCH_MAX = 1000
# maintenance_work_mem for a build (only ever raised): a 100k-lane graph of 384-dimension
# vectors is about 200 MB; a build that outgrows it goes on, much slower.
BUILD_MEMORY_MB = 512

# The graph's build parameters. pgvector's default ef_construction (64) left one query in 100 on
# benchmarks.pg_lanes' 30k lane with none of its true 10 nearest (its cluster poorly linked);
# 128 found all of them for every query, for 1.7x the build time (m = 24 gained nothing more).
GRAPH = "m = 16, ef_construction = 128"

_INDEX = re.compile(r"^(memory_vectors(?:_r\d+)?)_hnsw_l(\d+)$")


def index_name(table: str, lane: int) -> str:
    return f"{vectors.checked_table(table)}_hnsw_l{int(lane)}"


def drop_below(min_rows: int) -> int:
    """A lane with an index keeps it while it holds at least this many live memories."""
    return max(1, min_rows // 4)


@dataclass(frozen=True, slots=True)
class LaneIndex:
    lane: int
    table: str
    name: str
    valid: bool  # built and usable; False while being built, or left over by an interrupted build
    size_bytes: int
    building: bool = False  # a CREATE INDEX of it is running now (pg_stat_progress_create_index)


def lane_indexes(conn: Connection, tables: Sequence[str] | None = None) -> list[LaneIndex]:
    """The lane indexes on these vector tables (default: every vector table), by lane."""
    names = list(tables) if tables is not None else vectors.tables(conn)
    if not names:
        return []
    rows = conn.execute(
        "SELECT c.relname, t.relname, i.indisvalid AND i.indisready, pg_relation_size(c.oid),"
        " EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid)"
        " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
        " WHERE t.relname = ANY(%s) AND t.relnamespace = current_schema()::regnamespace",
        (names,),
    ).fetchall()
    found: list[LaneIndex] = []
    for name, table, valid, size, building in rows:
        matched = _INDEX.match(name)
        if matched and matched.group(1) == table:
            found.append(LaneIndex(int(matched.group(2)), table, name, bool(valid), int(size), bool(building)))
    return sorted(found, key=lambda index: (index.table, index.lane))


def usable(conn: Connection, table: str, lane: int) -> bool:
    """The lane has a built index on this table: a search may use it."""
    row = conn.execute(
        "SELECT i.indisvalid AND i.indisready FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
        (index_name(table, lane),),
    ).fetchone()
    return bool(row and row[0])


def ef_search(k: int) -> int:
    return min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, k))


def knn_sql(table: str, lane: int) -> str:
    """The indexed kNN query of one lane. The lane is a literal, so the planner can prove the
    partial index's predicate; it orders by distance alone, as an index scan can."""
    return (
        f"SELECT pk, 1 - (embedding <=> %(q)s) FROM {vectors.checked_table(table)}"
        f" WHERE lane_id = {int(lane)} AND pk <= %(upto)s ORDER BY embedding <=> %(q)s LIMIT %(k)s"
    )


# --- building and dropping --------------------------------------------------------------


@dataclass
class Maintenance:
    """What one maintenance pass did."""

    busy: bool = False  # another connection holds the builder's lock: it does the work
    built: list[tuple[int, float]] = field(default_factory=list)  # (lane, seconds)
    dropped: list[int] = field(default_factory=list)  # lanes whose index went
    cleared: list[str] = field(default_factory=list)  # invalid leftovers dropped before a rebuild


def _lane_sizes(conn: Connection) -> dict[int, int]:
    return {int(lane): int(count) for lane, count in conn.execute("SELECT id, live_count FROM lanes")}


def _wanted(sizes: dict[int, int], existing: dict[int, LaneIndex], min_rows: int) -> tuple[list[int], list[int]]:
    """(lanes to build, lanes whose index to drop)."""
    build = sorted(lane for lane, count in sizes.items() if count >= min_rows and lane not in existing)
    floor = drop_below(min_rows)
    drop = sorted(lane for lane in existing if sizes.get(lane, 0) < floor)
    return build, drop


def maintain(conn: Connection, min_rows: int, *, table: str | None = None, wait: bool = False) -> Maintenance:
    """Build the indexes big lanes lack and drop those of lanes that shrank, on `table` (default:
    the vector table searches use). `conn` is an autocommit connection outside any transaction
    (CREATE INDEX CONCURRENTLY cannot run in one). Without `wait`, a pass that finds another
    connection holding the builder's lock returns at once (`busy`)."""
    done = Maintenance()
    target = table or vectors.vector_table(conn)
    if target is None:
        return done
    target = vectors.checked_table(target)
    if wait:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, BUILD_LOCK))
    else:
        row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, BUILD_LOCK)).fetchone()
        if not (row and row[0]):
            done.busy = True
            return done
    try:
        _raise_build_memory(conn)
        existing = {index.lane: index for index in lane_indexes(conn, [target])}
        # Under the lock nobody else builds: an invalid index is an interrupted build's.
        for index in [i for i in existing.values() if not i.valid]:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index.name}")
            done.cleared.append(index.name)
            del existing[index.lane]
        build, drop = _wanted(_lane_sizes(conn), existing, min_rows)
        for lane in drop:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {existing[lane].name}")
            done.dropped.append(lane)
            log.info("lane %d: dropped its HNSW index (fewer than %d live memories)", lane, drop_below(min_rows))
        for lane in build:
            started = time.perf_counter()
            conn.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(target, lane)} ON {target}"
                f" USING hnsw (embedding vector_cosine_ops) WITH ({GRAPH}) WHERE lane_id = {int(lane)}"
            )
            seconds = time.perf_counter() - started
            done.built.append((lane, seconds))
            log.info("lane %d: built its HNSW index on %s in %.1f s", lane, target, seconds)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, BUILD_LOCK))
    return done


def _raise_build_memory(conn: Connection) -> None:
    row = conn.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'").fetchone()
    if row is not None and int(row[0]) < BUILD_MEMORY_MB * 1024:  # the setting is in kB
        conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY_MB}MB'")


# --- what check and doctor report -------------------------------------------------------------


def problems(conn: Connection, min_rows: int) -> list[Problem]:
    """One line per big lane (at or over the threshold, or with an index): its index's state."""
    table = vectors.vector_table(conn)
    if table is None:
        return []
    sizes = _lane_sizes(conn)
    existing = {index.lane: index for index in lane_indexes(conn, [table])}
    out: list[Problem] = []
    for lane in sorted(set(existing) | {lane for lane, count in sizes.items() if count >= min_rows}):
        count = sizes.get(lane, 0)
        index = existing.get(lane)
        ref = str(lane)
        if index is None:
            out.append(
                Problem(
                    "info",
                    "lane_index_pending",
                    f"{count} live memories (hnsw_min_rows {min_rows}): searched exactly until a running"
                    " server builds its HNSW index",
                    "lanes",
                    ref,
                )
            )
        elif index.building:
            out.append(
                Problem(
                    "info",
                    "lane_index_building",
                    f"{count} live memories: its HNSW index {index.name} is being built; searched exactly meanwhile",
                    "lanes",
                    ref,
                )
            )
        elif not index.valid:
            out.append(
                Problem(
                    "warning",
                    "lane_index_invalid",
                    f"{count} live memories: an interrupted build left {index.name} invalid; searched exactly"
                    " until a running server rebuilds it",
                    "lanes",
                    ref,
                )
            )
        else:
            shrunk = " (below a quarter of hnsw_min_rows: it will be dropped)" if count < drop_below(min_rows) else ""
            out.append(
                Problem(
                    "info",
                    "lane_index",
                    f"{count} live memories, HNSW index {index.name} ready ({index.size_bytes / 2**20:.1f} MiB){shrunk}",
                    "lanes",
                    ref,
                )
            )
    return out
