"""The curation worker and its lane leases: exactly-once curation, exclusivity,
dead holders, failure with retry and backoff, and work left queued by a closed service.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from memwal_mcp.config import Settings
from memwal_mcp.curation import worker as worker_module
from memwal_mcp.embedding import Embedder, FastEmbedEmbedder
from memwal_mcp.normalize import normalize_text
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import jobs as job_store
from memwal_mcp.store.sqlite.connection import connect
from tests.wrapped_models import PoisonEmbedder

COFFEE = "User prefers dark roast coffee"


def rows(path: Path, sql: str, *args: Any) -> list[tuple]:
    conn = connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


async def queue_jobs(settings: Settings, embedder: Embedder | None, items: list[tuple[str, str]]) -> list[str]:
    """Queue (namespace, text) jobs with no worker running, then close: they stay queued."""
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        return [(await svc.remember("local", text, namespace=ns)).job.id for ns, text in items]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# --- exactly once, two workers -----------------------------------------------


async def test_two_workers_curate_every_job_exactly_once(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    one = MemoryService(make_settings(curation={"batch_size": 8}), embedder=embedder)
    two = MemoryService(make_settings(curation={"batch_size": 8}), embedder=embedder)
    namespaces = ["ns-a", "ns-b", "ns-c", "ns-d", "ns-e"]
    sent: list[tuple[str, str]] = []
    for i in range(200):
        ns = namespaces[i % len(namespaces)]
        fact = f"Fact {i % 17} about subject {i % 3}"
        # Repeats of the same fact, some written differently but equal once normalized.
        text = {0: fact, 1: fact.upper(), 2: f"  {fact.replace(' ', '   ')}\n"}[i % 3 if i % 5 == 0 else 0]
        sent.append((ns, text))

    ids: list[str] = [""] * len(sent)
    async with one.running(), two.running():

        async def send(index: int) -> None:
            svc = one if index % 2 == 0 else two
            ns, text = sent[index]
            ids[index] = (await svc.remember("local", text, namespace=ns)).job.id

        async with anyio.create_task_group() as tg:
            for index in range(len(sent)):
                tg.start_soon(send, index)

        for start in range(0, len(ids), 50):
            chunk = await one.status("local", ids[start : start + 50], wait_ms=20000)
            assert all(job.status == "done" for job in chunk), [j for j in chunk if j.status != "done"]

    path = one.settings.db_path
    jobs = rows(path, "SELECT id, namespace, text, status, decision, memory_id, attempts FROM remember_jobs")
    assert len(jobs) == 200 and {j[0] for j in jobs} == set(ids)
    assert all(status == "done" and memory_id for _, _, _, status, _, memory_id, _ in jobs)
    assert all(attempts == 0 for *_, attempts in jobs)  # no failed attempt, no second pass

    mems = {
        m[0]: m[1:] for m in rows(path, "SELECT id, namespace, body, occurrences, source_job_id, status FROM memories")
    }
    jobs_per_memory: dict[str, list[tuple]] = defaultdict(list)
    for job in jobs:
        jobs_per_memory[job[5]].append(job)
    assert set(jobs_per_memory) == set(mems)  # every memory came from a job, every job maps to a memory

    for memory_id, (ns, body, occurrences, source_job_id, status) in mems.items():
        its_jobs = jobs_per_memory[memory_id]
        assert status == "live"
        assert len(its_jobs) == occurrences + 1
        assert [j[0] for j in its_jobs if j[4] == "created"] == [source_job_id]
        assert all(j[4] == "occurrence" for j in its_jobs if j[0] != source_job_id)
        assert all(j[1] == ns and normalize_text(j[2]) == normalize_text(body) for j in its_jobs)

    for ns in namespaces:
        expected = {normalize_text(text) for n, text in sent if n == ns}
        in_lane = [body for n, body, *_ in mems.values() if n == ns]
        assert len(in_lane) == len(expected), ns
        assert {normalize_text(b) for b in in_lane} == expected
        assert sum(occ + 1 for n, _, occ, *_ in mems.values() if n == ns) == sum(1 for n, _ in sent if n == ns)

    decisions = Counter(j[4] for j in jobs)
    assert decisions["created"] == len(mems)
    assert decisions["occurrence"] == 200 - len(mems)
    leases = rows(path, "SELECT lease_holder FROM lanes")
    assert leases and all(holder is None for (holder,) in leases)  # released on the way out


# --- leases ------------------------------------------------------------------


async def test_lease_is_exclusive_until_it_expires(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    await queue_jobs(settings, embedder, [("default", COFFEE), ("other", "Deploys go out on Fridays")])
    conn = connect(settings.db_path)
    try:
        t0 = time.time()
        first = job_store.claim_lane(conn, "worker-A", 10.0, t0)
        assert first is not None and first.namespace == "default"  # oldest waiting work first

        # B cannot have A's lane; it gets the other lane with work instead.
        other = job_store.claim_lane(conn, "worker-B", 100.0, t0 + 1)
        assert other is not None and other.id != first.id and other.namespace == "other"
        assert job_store.claim_lane(conn, "worker-C", 10.0, t0 + 2) is None
        assert job_store.claim_lane(conn, "worker-C", 10.0, t0 + 9.9) is None

        assert job_store.renew_lease(conn, first.id, "worker-A", t0 + 20) is True
        assert job_store.claim_lane(conn, "worker-C", 10.0, t0 + 15) is None  # renewed: still A's

        taken = job_store.claim_lane(conn, "worker-C", 10.0, t0 + 20)  # expires_at <= now: free
        assert taken is not None and taken.id == first.id
        assert job_store.renew_lease(conn, first.id, "worker-A", t0 + 40) is False
        assert job_store.claim_lane(conn, "worker-A", 10.0, t0 + 21) is None

        # B's lane is still B's all along.
        assert job_store.claim_lane(conn, "worker-A", 10.0, t0 + 25) is None

        # Releasing someone else's lease does nothing.
        job_store.release_lease(conn, first.id, "worker-A")
        assert conn.execute("SELECT lease_holder FROM lanes WHERE id = ?", (first.id,)).fetchone() == ("worker-C",)
        job_store.release_lease(conn, first.id, "worker-C")
        again = job_store.claim_lane(conn, "worker-A", 10.0, t0 + 26)
        assert again is not None and again.id == first.id
    finally:
        conn.close()


async def test_lane_without_due_jobs_is_not_claimed(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        await svc.remember("local", COFFEE, wait_ms=5000)
    conn = connect(settings.db_path)
    try:
        assert job_store.claim_lane(conn, "worker-A", 10.0, time.time()) is None
    finally:
        conn.close()


async def test_dead_holder_on_this_host_is_reclaimed_at_once(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    await queue_jobs(settings, embedder, [("default", COFFEE)])
    host = socket.gethostname()
    conn = connect(settings.db_path)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        now = time.time()
        # A live process on this host keeps its lease until it expires.
        live_holder = f"{host}:{alive.pid}:x"
        lane = job_store.claim_lane(conn, live_holder, 600.0, now)
        assert lane is not None
        assert job_store.claim_lane(conn, "worker-B", 10.0, now + 1) is None
        conn.execute("UPDATE lanes SET lease_holder = NULL, lease_expires_at = NULL")

        # The same pid on another machine tells nothing: only the expiry frees it.
        pid = dead_pid()
        assert job_store.claim_lane(conn, f"elsewhere-{host}:{pid}:x", 600.0, now) is not None
        assert job_store.claim_lane(conn, "worker-B", 10.0, now + 1) is None
        conn.execute("UPDATE lanes SET lease_holder = NULL, lease_expires_at = NULL")

        # A holder whose process has exited on this host: reclaimed at once, long before expiry.
        dead_holder = f"{host}:{pid}:x"
        assert job_store.claim_lane(conn, dead_holder, 600.0, now) is not None
        taken = job_store.claim_lane(conn, "worker-B", 10.0, now + 1)
        assert taken is not None and taken.id == lane.id
        assert job_store.renew_lease(conn, lane.id, dead_holder, now + 700) is False
    finally:
        alive.kill()
        alive.wait()
        conn.close()


async def test_worker_takes_over_a_lane_left_by_a_dead_process(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    [job_id] = await queue_jobs(settings, embedder, [("default", COFFEE)])
    holder = f"{socket.gethostname()}:{dead_pid()}:deadbeef"
    conn = connect(settings.db_path)
    try:
        conn.execute("UPDATE lanes SET lease_holder = ?, lease_expires_at = ?", (holder, time.time() + 3600))
    finally:
        conn.close()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        [job] = await svc.status("local", [job_id], wait_ms=5000)
    assert job.status == "done" and job.decision == "created"


async def test_worker_waits_for_a_live_foreign_lease_to_expire(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings(curation={"poll_interval_s": 0.1})
    [job_id] = await queue_jobs(settings, embedder, [("default", COFFEE)])
    conn = connect(settings.db_path)
    try:
        conn.execute("UPDATE lanes SET lease_holder = 'other-host:1:cafe', lease_expires_at = ?", (time.time() + 1.0,))
    finally:
        conn.close()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        [early] = await svc.status("local", [job_id], wait_ms=600)
        assert early.status == "queued"  # the lane belongs to someone else for now
        [late] = await svc.status("local", [job_id], wait_ms=5000)
    assert late.status == "done"


# --- failure and retry -------------------------------------------------------


async def _wait_for(predicate: Callable[[], Any], timeout: float) -> None:
    with anyio.fail_after(timeout):
        while not await predicate():
            await anyio.sleep(0.02)


async def test_failing_job_is_retried_with_backoff_then_failed_and_the_lane_moves_on(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    poison = PoisonEmbedder(embedder)
    svc = MemoryService(make_settings(curation={"max_attempts": 2}), embedder=poison)
    async with svc.running():
        bad = (await svc.remember("local", "POISON: a fact the model cannot embed")).job.id

        async def first_attempt_failed() -> bool:
            [job] = await svc.status("local", [bad])
            return job.attempts >= 1

        await _wait_for(first_attempt_failed, 3)
        [after_first] = await svc.status("local", [bad])
        assert after_first.status == "queued"  # back in the queue, with backoff
        assert after_first.error is not None and "embedding failed" in after_first.error

        # Work remembered meanwhile is not held up by the job waiting to be retried.
        good = await svc.remember("local", COFFEE, wait_ms=3000)
        assert good.job.status == "done" and good.job.decision == "created"

        [final] = await svc.status("local", [bad], wait_ms=4000)
        assert final.status == "failed"
        assert final.attempts == 2
        assert final.memory_id is None
        assert final.error is not None and "embedding failed" in final.error and "POISON" in final.error
        assert final.updated_at - after_first.updated_at >= 0.5  # the first backoff step

        # The lane is not stalled after the failure either.
        later = await svc.remember("local", "Deploys go out on Fridays", wait_ms=3000)
        assert later.job.status == "done"
        result = await svc.recall("local", "coffee", limit=10, min_score=0)  # every live fact, related or not
    assert {hit.text for hit in result.hits} == {COFFEE, "Deploys go out on Fridays"}
    rows_ = rows(svc.settings.db_path, "SELECT status FROM remember_jobs WHERE id = ?", bad)
    assert rows_ == [("failed",)]  # kept in the journal


async def test_valid_job_batched_with_a_poison_job_still_gets_done(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    poison = PoisonEmbedder(embedder)
    settings = make_settings(curation={"max_attempts": 2})
    bad, good = await queue_jobs(
        settings, poison, [("default", "POISON: a fact the model cannot embed"), ("default", COFFEE)]
    )
    svc = MemoryService(settings, embedder=poison)
    async with svc.running():
        jobs = await svc.status("local", [bad, good], wait_ms=4000)
    assert jobs[0].status == "failed"
    assert jobs[1].status == "done", jobs[1]


# --- work left queued --------------------------------------------------------


async def test_jobs_left_queued_by_a_closed_service_are_curated_by_the_next(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    items = [("default", COFFEE)] * 3 + [("default", "Deploys go out on Fridays"), ("work", COFFEE)]
    ids = await queue_jobs(settings, embedder, items)
    assert rows(settings.db_path, "SELECT COUNT(*) FROM remember_jobs WHERE status = 'queued'") == [(5,)]
    assert rows(settings.db_path, "SELECT COUNT(*) FROM memories") == [(0,)]

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        jobs = await svc.status("local", ids, wait_ms=5000)
        assert [job.status for job in jobs] == ["done"] * 5
        assert [job.decision for job in jobs] == ["created", "occurrence", "occurrence", "created", "created"]
        result = await svc.recall("local", "coffee", limit=5)
    assert result.hits[0].text == COFFEE and result.hits[0].copies == 2
    assert all(not hit.pending for hit in result.hits)
    assert sorted(rows(settings.db_path, "SELECT namespace, occurrences FROM memories")) == [
        ("default", 0),
        ("default", 2),
        ("work", 0),
    ]


async def test_a_job_whose_write_fails_is_rolled_back_alone(make_settings, embedder) -> None:
    """A failure while applying one job (here a trigger refusing its row) undoes just that job."""
    from memwal_mcp.store.sqlite.connection import connect

    settings = make_settings(curation={"max_attempts": 2})
    queued = MemoryService(settings, embedder=embedder)
    async with queued.running(worker=False):
        jobs = [
            (await queued.remember("local", text)).job.id
            for text in ("The boiler is serviced in October", "POISON pill", "The bins go out on Tuesday")
        ]
    conn = connect(settings.db_path)
    conn.execute(
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON memories WHEN NEW.body LIKE '%POISON%'"
        " BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
    )
    conn.close()

    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        good, poison, later = await svc.status("local", jobs, wait_ms=10000)
        assert good.status == later.status == "done"
        for _ in range(40):  # the poison job is retried after its backoff, then fails for good
            poison = (await svc.status("local", [jobs[1]]))[0]
            if poison.status == "failed":
                break
            await anyio.sleep(0.1)
        assert poison.status == "failed" and "poisoned row" in (poison.error or "")
        bodies = await svc.store.db.read(
            lambda c: [r[0] for r in c.execute("SELECT body FROM memories ORDER BY rowid")]
        )
        assert bodies == ["The boiler is serviced in October", "The bins go out on Tuesday"]
        counters = await svc.stats()
        assert counters.counters.get("curation_created") == 2


async def test_a_worker_that_loses_its_lease_mid_lane_stops_and_leaves_the_rest_queued(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    """The worker embeds batches ahead of the one it writes; when another worker takes the
    lane, the batches it had embedded ahead are dropped, not written."""
    from memwal_mcp.curation.worker import CurationWorker

    settings = make_settings(curation={"batch_size": 8})
    texts = [f"Build server {i} restarts at {i % 24}:00 every day" for i in range(48)]
    await queue_jobs(settings, embedder, [("default", t) for t in texts])
    svc = MemoryService(settings, embedder=embedder)
    batches = 0

    def steal_after_the_first_batch() -> None:
        nonlocal batches
        batches += 1
        if batches == 1:
            conn = connect(settings.db_path)
            try:
                conn.execute(
                    "UPDATE lanes SET lease_holder = 'worker-elsewhere', lease_expires_at = ?", (time.time() + 600,)
                )
                conn.commit()
            finally:
                conn.close()

    async with svc.running(worker=False):
        worker = CurationWorker(svc.store, svc.embedder, settings.curation, steal_after_the_first_batch)
        with anyio.fail_after(60):
            assert await worker.run_once() is True
    status = Counter(s for (s,) in rows(settings.db_path, "SELECT status FROM remember_jobs"))
    assert status == {"done": 8, "queued": 40}
    assert rows(settings.db_path, "SELECT COUNT(*) FROM memories") == [(8,)]
    assert rows(settings.db_path, "SELECT lease_holder FROM lanes") == [("worker-elsewhere",)]


# --- when a lone remember is curated ---------------------------------------------


async def test_a_remember_waits_for_tool_calls_to_pause_unless_someone_waits_for_it(
    make_settings, embedder, monkeypatch
) -> None:
    """Woken by a remember, the worker lets the next tool calls go first; a recall (which
    must see the fact) or a `wait_ms` makes it start at once."""
    monkeypatch.setattr(worker_module, "QUIET_S", 30.0)
    monkeypatch.setattr(worker_module, "MAX_DEFER_S", 60.0)
    # No idle poll in the window (it is for other processes' jobs, and starts them at once).
    svc = MemoryService(make_settings(curation={"poll_interval_s": 60}), embedder=embedder)
    async with svc.running():
        await anyio.sleep(0.5)  # the worker's first pass, at start-up, is over
        first = (await svc.remember("local", COFFEE)).job
        await anyio.sleep(0.5)
        [still] = await svc.status("local", [first.id])
        assert still.status == "queued"  # pausing, not curating

        with anyio.fail_after(20):  # well inside the 30 s pause: the recall hurried it
            hits = (await svc.recall("local", "what coffee does the user like?")).hits
        assert hits and hits[0].text == COFFEE
        [done] = await svc.status("local", [first.id])
        assert done.status == "done" and done.memory_id == hits[0].id

        with anyio.fail_after(20):
            second = (await svc.remember("local", "Deploys go out on Fridays", wait_ms=15000)).job
        assert second.status == "done"


async def test_remembers_that_never_pause_are_still_curated(make_settings, embedder, monkeypatch) -> None:
    """The pause has a ceiling: a steady stream of remembers does not starve curation."""
    monkeypatch.setattr(worker_module, "QUIET_S", 30.0)
    monkeypatch.setattr(worker_module, "MAX_DEFER_S", 0.3)
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running():
        first = (await svc.remember("local", COFFEE)).job
        done = False
        with anyio.fail_after(30):
            for i in range(10_000):  # a remember every 50 ms: never a 30 s pause
                await svc.remember("local", f"Build number {i} passed on the staging cluster")
                [job] = await svc.status("local", [first.id])
                if job.status == "done":
                    done = True
                    break
                await anyio.sleep(0.05)
        assert done


async def test_a_server_left_running_through_an_upgrade_leaves_its_jobs_queued(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder
) -> None:
    """A newer memwal-mcp migrates the file while this one runs: this one must not curate on
    tables that may have changed (it would fail the jobs for good); the jobs wait, untouched,
    for the newer version, and this version refuses to reopen the file."""
    from memwal_mcp.errors import StoreUnavailable
    from memwal_mcp.store.sqlite.migrations import shipped_version

    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running():
        first = await svc.remember("local", "The build server is in rack 4", wait_ms=10_000)
        assert first.job.status == "done"
        conn = connect(settings.db_path)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (shipped_version() + 1, f"{shipped_version() + 1:03d}_from_a_newer_version", time.time()),
        )
        conn.close()
        job = (await svc.remember("local", "The staging server is in rack 7")).job
        await anyio.sleep(1.5)
        (after,) = await svc.status("local", [job.id])
    assert after.status == "queued"
    assert rows(settings.db_path, "SELECT attempts FROM remember_jobs WHERE id = ?", job.id) == [(0,)]
    again = MemoryService(settings, embedder=embedder)
    try:
        async with again.running():
            raise AssertionError("an older version opened a file a newer one migrated")
    except StoreUnavailable as exc:
        assert "from_a_newer_version" in str(exc)
