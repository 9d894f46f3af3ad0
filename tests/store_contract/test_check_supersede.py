"""`check` knows the new kinds of row: a superseded memory (retired, merged into nothing) and an
analyze request (done, in no memory) are consistent, not problems a user is alarmed by."""

from __future__ import annotations

from memwal_mcp.store import Store, StoreWriter
from memwal_mcp.store.records import JobRequest

from .helpers import T0, Stored, lane_of, remember


async def test_a_supersede_and_an_analyze_request_leave_check_clean(store: Store) -> None:
    def build(w: StoreWriter) -> tuple[Stored, str]:
        old = remember(w, "alice", "home", "The gate code is 1234")
        ((job, _),) = w.insert_jobs(
            "alice", [JobRequest("default", "The gate code is 9876", supersedes=(old.id,))], T0 + 1
        )
        with w.transaction():
            _, memory_id = w.create_memory(
                owner="alice",
                namespace="default",
                lane=lane_of(w, "alice", "default"),
                body=job.text,
                key=job.text.lower(),
                source_job_id=job.id,
                vector=None,
                model_id=None,
                now=T0 + 1,
            )
            w.mark_done(job.id, "created", memory_id, T0 + 1)
        w.insert_analysis("alice", "default", "Alice: the gate code changed.", [], T0 + 2)
        return old, memory_id

    old, new = await store.write(build)
    found = await store.read(lambda r: r.memory_by_id("alice", old.id))
    assert found is not None and found[1] == "superseded" and found[0].superseded_by == new
    problems, _ = await store.read(lambda r: r.check())
    assert [p for p in problems if p.severity == "error"] == []
