"""Several processes on one database: the schema is made once however many start together, and
two workers never hold one lane. Each store here has its own connections, as a replica has."""

from __future__ import annotations

import threading
import time

import anyio
import psycopg
import pytest

from memwal_mcp.store.leases import lease_holder_id
from memwal_mcp.store.postgres.backend import PostgresStore
from memwal_mcp.store.postgres.migrations import load_migrations

from ..store_contract.helpers import T0

LEASE_S = 30.0


def test_three_stores_starting_at_once_apply_each_migration_once(postgres_server) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.new_database()  # no schema yet
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []

    def start() -> None:
        store = PostgresStore(url)
        barrier.wait()
        try:
            anyio.run(store.open)
            anyio.run(store.close)
        except BaseException as exc:  # reported below, with the others
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY 1").fetchall()
        assert rows == [(m.version, 1) for m in load_migrations()]
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
    postgres_server.give_back(url)


@pytest.fixture
async def replicas(pg_url: str):  # type: ignore[no-untyped-def]
    stores = [PostgresStore(pg_url), PostgresStore(pg_url)]
    for store in stores:
        await store.open()
    yield stores
    for store in stores:
        await store.close()


async def _file(store: PostgresStore, lanes: int) -> None:
    def work(w) -> None:  # type: ignore[no-untyped-def]
        for i in range(lanes):
            w.insert_job("alice", f"lane-{i}", f"fact {i}", None, T0)

    await store.write(work)


async def test_two_replicas_claiming_at_once_never_share_a_lane(replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    await _file(a, 12)
    claimed: dict[str, int | None] = {}

    async def claim(store: PostgresStore) -> None:
        holder = lease_holder_id()
        lane = await store.write(lambda w: w.claim_lane(holder, LEASE_S, T0 + 1))
        claimed[holder] = lane.id if lane is not None else None

    async with anyio.create_task_group() as group:
        for _ in range(6):  # twelve workers, six per replica, all looking for work at once
            group.start_soon(claim, a)
            group.start_soon(claim, b)
    lanes = list(claimed.values())
    assert len(lanes) == 12 and None not in lanes and len(set(lanes)) == 12  # every lane once, none twice


async def test_a_lane_another_replica_is_claiming_is_skipped_not_waited_for(replicas, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    a, _ = replicas
    await _file(a, 2)
    lanes = await a.read(lambda r: r.owner_lanes("alice"))
    with psycopg.connect(pg_url) as other:  # holds the first lane's row, as a claim in progress does
        other.execute("SELECT 1 FROM lanes WHERE id = %s FOR UPDATE", (lanes[0].id,))
        with anyio.fail_after(10):  # a wait would block until `other` ends
            got = await a.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, T0 + 1))
        assert got is not None and got.id == lanes[1].id
        assert await a.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, T0 + 1)) is None
    assert (await a.write(lambda w: w.claim_lane(lease_holder_id(), LEASE_S, T0 + 1))) == lanes[0]


async def test_an_expired_lease_moves_to_the_other_replica(replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    await _file(a, 1)
    first, second = lease_holder_id(), lease_holder_id()
    lane = await a.write(lambda w: w.claim_lane(first, LEASE_S, T0 + 1))
    assert lane is not None
    assert await b.write(lambda w: w.claim_lane(second, LEASE_S, T0 + 2)) is None
    assert await b.write(lambda w: w.claim_lane(second, LEASE_S, T0 + 2 + LEASE_S)) == lane
    assert not await a.write(lambda w: w.renew_lease(lane.id, first, T0 + 3 + LEASE_S))


async def test_a_remember_never_waits_for_the_lanes_curation(replicas, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    """A curation batch updates its lane's row (lease, totals) and holds it until it commits. A
    remember into that lane on another replica must not wait for the batch: it reads the lane's
    id, it does not re-insert its row (an INSERT ... ON CONFLICT waits for the row's holder)."""
    a, b = replicas
    await _file(a, 1)
    lane = (await a.read(lambda r: r.owner_lanes("alice")))[0]
    with psycopg.connect(pg_url) as other:
        # as the lane totals' trigger and the lease renewal do, in a batch not yet committed
        other.execute("UPDATE lanes SET lease_expires_at = %s WHERE id = %s", (T0 + LEASE_S, lane.id))
        # A remember that waits for `other` would wait forever (the test holds it): end it after 10 s.
        release = threading.Timer(10, other.rollback)
        release.start()
        started = time.monotonic()
        try:
            job, replayed = await b.write(
                lambda w: w.insert_job("alice", lane.namespace, "fact while curating", None, T0)
            )
        finally:
            release.cancel()
        waited = time.monotonic() - started
        other.rollback()
    assert waited < 5, f"the remember waited {waited:.1f} s for the lane's row"
    assert not replayed and job.namespace == lane.namespace
