"""The per-owner full-text tables: a search in some of an owner's namespaces finds exactly what
filtering a search of all of them would, with the same scores, whichever strategy fts.search picks."""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path

import pytest

from memwal_mcp.store.sqlite import fts, memories, revisions
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.store.sqlite.jobs import ensure_lane
from memwal_mcp.store.sqlite.migrations import apply_migrations

WORDS = "tea coffee river bike garden piano lisbon berlin tuesday invoice rust python".split()
QUERIES = ['"tea"', '"coffee" OR "river"', '"piano" OR "lisbon" OR "tuesday"', '"rust"', '"absent"']


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    """alice: lanes of 120, 30 and 3 live memories (plus retired ones); bob: one lane."""
    conn = connect(Path(tmp_path_factory.mktemp("fts")) / "fts.db")
    apply_migrations(conn)
    r = random.Random(7)
    lanes: dict[str, int] = {}
    conn.execute("BEGIN")
    for owner, namespace, size in (
        ("alice", "main", 120),
        ("alice", "side", 30),
        ("alice", "tiny", 3),
        ("bob", "main", 200),
    ):
        lane = lanes[f"{owner}/{namespace}"] = ensure_lane(conn, owner, namespace)
        for i in range(size + 5):
            body = " ".join(r.choice(WORDS) for _ in range(r.randint(2, 9))) + f" #{i}"
            rowid, _ = memories.create_memory(
                conn,
                owner=owner,
                namespace=namespace,
                lane=lane,
                body=body,
                key=body,
                source_job_id=f"j_{lane}_{i}",
                vector=None,
                model_id=None,
                now=time.time(),
            )
            if i >= size:
                revisions.retire(conn, rowid, "m_elsewhere", time.time())
    conn.execute("COMMIT")
    yield conn, lanes
    conn.close()


def _lanes_of(conn, rowids) -> dict[int, int]:
    return {
        rowid: conn.execute("SELECT lane_id FROM memories WHERE rowid = ?", (rowid,)).fetchone()[0] for rowid in rowids
    }


def test_live_counts_follow_the_memories(store) -> None:
    conn, lanes = store
    counts = dict(conn.execute("SELECT owner || '/' || namespace, live_count FROM lanes").fetchall())
    assert counts == {"alice/main": 120, "alice/side": 30, "alice/tiny": 3, "bob/main": 200}


@pytest.mark.parametrize("subset", [c for n in (1, 2, 3) for c in itertools.combinations(["main", "side", "tiny"], n)])
@pytest.mark.parametrize("limit", [1, 5, 40, 500])
def test_a_search_in_some_namespaces_equals_filtering_a_search_in_all(store, subset, limit) -> None:
    conn, lanes = store
    wanted = [lanes[f"alice/{namespace}"] for namespace in subset]
    everything = [lanes[f"alice/{namespace}"] for namespace in ("main", "side", "tiny")]
    for match in QUERIES:
        found, exhausted = fts.search(conn, wanted, match, limit)
        all_hits, _ = fts.search(conn, everything, match, 100_000)
        lane_of = _lanes_of(conn, [rowid for rowid, _ in all_hits])
        expected = [hit for hit in all_hits if lane_of[hit[0]] in wanted]
        assert [score for _, score in found] == pytest.approx([score for _, score in expected[:limit]])
        assert {rowid for rowid, _ in found} <= {rowid for rowid, _ in expected}
        assert exhausted == (len(expected) <= limit) or (not exhausted and len(expected) == limit), (match, limit)


def test_another_owner_is_never_found(store) -> None:
    conn, lanes = store
    found, _ = fts.search(conn, [lanes["alice/main"]], '"tea" OR "coffee"', 10_000)
    assert set(_lanes_of(conn, [rowid for rowid, _ in found]).values()) == {lanes["alice/main"]}
