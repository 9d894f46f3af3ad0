"""Two stdio servers on one database file, 2,000 pipelined remembers, one SIGKILL mid-stream.

Like two MCP clients (Claude Desktop and an IDE) each running its own `memwal-mcp`:
both processes take remembers and both run a curation worker on the same file. The
requests are raw JSON-RPC lines written without waiting for replies. Some carry
idempotency keys (a few keys are sent to both processes), some repeat an earlier
fact exactly, and they spread over several namespaces. Process A is SIGKILLed while
hundreds of its requests are in flight; a new process takes over A's share: every
request A had not answered is sent again (a client retrying), the rest of its share
for the first time.

Afterwards: `memwal-mcp check` is clean; every job id a client was handed is in the
journal once, done, with a memory; jobs, memories and occurrences agree (each fact
once per namespace, every repeat an occurrence); one key is one job; and recall with
a fact's exact text puts that fact first.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from memwal_mcp.normalize import normalize_text

from .conftest import MEMWAL, RawServer, db_rows

pytestmark = pytest.mark.slow

TOTAL = 2000
SHARED_KEYS = 40  # requests sent to both processes: 80 of the 2,000 lines
NAMESPACES = ("default", "ops", "notes", "team", "infra")
KILL_AFTER_SENT = 600  # of A's share, then SIGKILL once at least KILL_AFTER_ACKED answers arrived
KILL_AFTER_ACKED = 250
STATUS_WAIT_MS = 30_000

_WHO = ("Ana", "Bilal", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lea")
_WHAT = ("prefers", "deploys", "reviews", "owns", "migrates", "benchmarks", "documents", "monitors", "rotates")
_THING = (
    "the billing API",
    "Kafka topics",
    "the Postgres 16 cluster",
    "nightly backups",
    "TLS certificates",
    "the iOS release",
    "feature flags",
    "the Grafana dashboards",
    "Terraform modules",
    "the search index",
)
_WHEN = ("on Mondays", "every sprint", "before 10:00 UTC", "after each incident", "in us-east-1", "from the CLI")


@dataclass(frozen=True)
class Request:
    index: int
    text: str
    namespace: str
    key: str | None
    shared: bool = False  # sent to both processes

    def arguments(self) -> dict[str, Any]:
        arguments: dict[str, Any] = {"text": self.text, "namespace": self.namespace}
        if self.key is not None:
            arguments["idempotency_key"] = self.key
        return arguments


def _fact(rng: random.Random, number: int) -> str:
    return (
        f"{rng.choice(_WHO)} {rng.choice(_WHAT)} {rng.choice(_THING)} {rng.choice(_WHEN)} "
        f"(ticket OPS-{number:04d}, {rng.choice(_WHO).lower()}-{rng.randrange(10**6):06d})"
    )


def build_shares(seed: int = 20260) -> tuple[list[Request], list[Request]]:
    """(A's share, B's share), 2,000 lines in total; shared-key requests are in both."""
    rng = random.Random(seed)
    singles: list[Request] = []
    while len(singles) < TOTAL - 2 * SHARED_KEYS:
        index = len(singles)
        roll = rng.random()
        if roll < 0.15 and singles:  # an exact repeat of an earlier fact, same namespace, no key
            earlier = rng.choice(singles)
            singles.append(Request(index, earlier.text, earlier.namespace, None))
        else:
            key = f"crash-key-{index:04d}" if roll < 0.40 else None
            singles.append(Request(index, _fact(rng, index), rng.choice(NAMESPACES), key))
    shared = [
        Request(len(singles) + i, _fact(rng, 5000 + i), rng.choice(NAMESPACES), f"crash-shared-{i:03d}", shared=True)
        for i in range(SHARED_KEYS)
    ]
    a: list[Request] = []
    b: list[Request] = []
    for request in singles:
        (a if rng.random() < 0.5 else b).append(request)
    for request in shared:  # spread over both streams, at random positions
        a.insert(rng.randrange(len(a) + 1), request)
        b.insert(rng.randrange(len(b) + 1), request)
    assert len(a) + len(b) == TOTAL
    return a, b


async def _send(server: RawServer, requests: list[Request]) -> dict[int, Request]:
    """Write every request without waiting for answers; returns JSON-RPC id -> request."""
    sent: dict[int, Request] = {}
    for request in requests:
        request_id = await server.send_request(
            "tools/call", {"name": "memwal_remember", "arguments": request.arguments()}
        )
        sent[request_id] = request
    return sent


def _job_id(reply: dict[str, Any]) -> str:
    assert "result" in reply and reply["result"]["isError"] is False, reply
    return reply["result"]["structuredContent"]["job_id"]


async def _collect(server: RawServer, sent: dict[int, Request], timeout: float) -> dict[int, str]:
    answered: dict[int, str] = {}
    with anyio.fail_after(timeout):
        for request_id in sent:
            answered[request_id] = _job_id(await server.response(request_id, timeout=timeout))
    return answered


async def _wait_all_done(server: RawServer, job_ids: list[str], deadline_s: float) -> dict[str, dict[str, Any]]:
    outcomes: dict[str, dict[str, Any]] = {}
    with anyio.fail_after(deadline_s):
        todo = list(job_ids)
        while todo:
            chunks = [todo[i : i + 50] for i in range(0, len(todo), 50)]
            requests = [
                await server.send_request(
                    "tools/call",
                    {"name": "memwal_remember_status", "arguments": {"job_ids": chunk, "wait_ms": STATUS_WAIT_MS}},
                )
                for chunk in chunks
            ]
            for request_id in requests:
                reply = await server.response(request_id, timeout=deadline_s)
                assert reply["result"]["isError"] is False, reply
                outcomes.update({job["job_id"]: job for job in reply["result"]["structuredContent"]["jobs"]})
            todo = [job_id for job_id in todo if outcomes[job_id]["status"] == "queued"]
    return outcomes


async def test_two_processes_one_sigkill_2000_remembers(server_env, tmp_path: Path, db_path: Path, raw_servers) -> None:
    env = server_env()
    share_a, share_b = build_shares()
    with anyio.fail_after(150):
        a, b = await RawServer.start(env), await RawServer.start(env)
        raw_servers += [a, b]
        await asyncio.gather(a.initialize(), b.initialize())

        # B gets its whole share pipelined, in the background, while A is fed and killed.
        b_sent_task = asyncio.ensure_future(_send(b, share_b))
        a_sent = await _send(a, share_a[:KILL_AFTER_SENT])
        with anyio.fail_after(60):
            while len(a._responses) < KILL_AFTER_ACKED:  # answers that reached the client
                await asyncio.sleep(0.005)
        await a.kill()
        assert a.proc.returncode == -9
        acked_by_a = {request_id: _job_id(reply) for request_id, reply in a._responses.items() if request_id in a_sent}
        in_flight = len(a_sent) - len(acked_by_a)
        assert in_flight > 0, "A answered everything before the kill: nothing was mid-stream"

        # A's replacement: every request of A's share without an answer (resent or never sent).
        answered = {a_sent[request_id].index for request_id in acked_by_a}
        rest = [request for request in share_a if request.index not in answered]
        a2 = await RawServer.start(env)
        raw_servers.append(a2)
        await a2.initialize()
        a2_sent = await _send(a2, rest)

        b_sent = await b_sent_task
        b_jobs = await _collect(b, b_sent, timeout=90)
        a2_jobs = await _collect(a2, a2_sent, timeout=90)

        # Every job id a client was handed, and which request it answered.
        handed: list[tuple[Request, str]] = [
            *((a_sent[r], j) for r, j in acked_by_a.items()),
            *((a2_sent[r], j) for r, j in a2_jobs.items()),
            *((b_sent[r], j) for r, j in b_jobs.items()),
        ]
        assert len(handed) == TOTAL  # A's answered + A2's (the rest of A's share) + B's
        accepted = sorted({job_id for _, job_id in handed})

        outcomes = await _wait_all_done(a2, accepted, deadline_s=90)
        assert all(outcomes[job_id]["status"] == "done" for job_id in accepted)

        # Recall with a fact's exact text finds it first (a sample of 50 distinct facts).
        distinct = sorted({(r.namespace, r.text) for r in [*share_a, *share_b]})
        sample = random.Random(5).sample(distinct, 50)
        recalls = [
            await b.send_request(
                "tools/call", {"name": "memwal_recall", "arguments": {"query": text, "namespace": ns, "limit": 3}}
            )
            for ns, text in sample
        ]
        for (ns, text), request_id in zip(sample, recalls):
            reply = await b.response(request_id, timeout=60)
            assert reply["result"]["isError"] is False, reply
            hits = reply["result"]["structuredContent"]["hits"]
            assert hits and hits[0]["text"] == text, (text, hits[:2])
            assert hits[0]["namespace"] == ns and not hits[0]["pending"]

        for server in (a2, b):
            assert await server.close_stdin_and_wait(timeout=30) == 0, "".join(server.stderr_lines[-20:])

    replies = "".join(a.stdout_lines + a2.stdout_lines + b.stdout_lines)
    assert "database is locked" not in replies

    # The store is consistent by its own checker.
    check = subprocess.run([str(MEMWAL), "check", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["ok"] is True

    # --- exactly once, straight from the file ----------------------------------------------------
    jobs = {
        row[0]: row[1:]
        for row in db_rows(
            db_path, "SELECT id, status, decision, memory_id, idempotency_key, namespace, text FROM remember_jobs"
        )
    }
    rows_per_id = Counter(row[0] for row in db_rows(db_path, "SELECT id FROM remember_jobs"))
    assert all(rows_per_id[job_id] == 1 for job_id in accepted)
    for job_id in accepted:
        status, decision, memory_id, *_ = jobs[job_id]
        assert status == "done" and memory_id and decision in ("created", "occurrence"), (job_id, jobs[job_id])
    for request, job_id in handed:
        _, _, _, key, namespace, text = jobs[job_id]
        assert (namespace, text, key) == (request.namespace, request.text, request.key), (request, jobs[job_id])

    # Jobs nobody was told about can only be A's unkeyed requests that were in flight at the kill
    # (inserted, then killed before the reply went out); they are curated like any other.
    orphans = {job_id: row for job_id, row in jobs.items() if job_id not in set(accepted)}
    assert len(orphans) <= in_flight
    for job_id, (status, _decision, memory_id, key, _, _) in orphans.items():
        assert key is None and status == "done" and memory_id, (job_id, jobs[job_id])

    # One key, one job: shared keys got the same job id from both processes.
    keyed = Counter(row[3] for row in jobs.values() if row[3] is not None)
    assert keyed and max(keyed.values()) == 1
    by_key: dict[str, set[str]] = {}
    for request, job_id in handed:
        if request.key is not None:
            by_key.setdefault(request.key, set()).add(job_id)
    assert all(len(ids) == 1 for ids in by_key.values()), {k: v for k, v in by_key.items() if len(v) > 1}
    assert sum(1 for request, _ in handed if request.shared) >= SHARED_KEYS  # from both sides, or A and A2

    # Memories and occurrences agree with the journal: one memory per fact per namespace,
    # made by one 'created' job, and every other job of that fact an occurrence of it.
    memories = {
        row[0]: row[1:]
        for row in db_rows(db_path, "SELECT id, source_job_id, occurrences, namespace, body, status FROM memories")
    }
    assert all(row[4] == "live" for row in memories.values())
    created = {job_id: row[2] for job_id, row in jobs.items() if row[1] == "created"}
    assert sorted(created.values()) == sorted(memories), "a memory per 'created' job, and no other"
    by_memory: dict[str, list[tuple]] = {}
    for row in jobs.values():
        by_memory.setdefault(row[2], []).append(row)
    for memory_id, (source, occurrences, namespace, body, _) in memories.items():
        assert created.get(source) == memory_id, (memory_id, source)
        folded = by_memory[memory_id]
        assert occurrences == len(folded) - 1, (memory_id, occurrences, len(folded))
        assert sum(1 for row in folded if row[1] == "occurrence") == occurrences
        for row in folded:
            assert row[4] == namespace and normalize_text(row[5]) == normalize_text(body), (memory_id, row)
    facts = Counter((namespace, normalize_text(body)) for _, _, namespace, body, _ in memories.values())
    assert max(facts.values()) == 1, [fact for fact, n in facts.items() if n > 1][:5]
    assert set(facts) == {(ns, normalize_text(text)) for ns, text in distinct}
    assert len(jobs) == len(memories) + sum(row[1] for row in memories.values())
    print(
        f"crash: A answered {len(acked_by_a)} of {len(a_sent)} sent, {in_flight} in flight at SIGKILL; "
        f"{len(rest)} sent to its replacement; {len(jobs)} jobs ({len(orphans)} never acknowledged), "
        f"{len(memories)} memories, {sum(row[1] for row in memories.values())} occurrences"
    )
