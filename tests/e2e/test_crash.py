"""Two stdio servers on one database (a SQLite file, and PostgreSQL), 2,000 pipelined remembers,
one SIGKILL mid-stream.

Like two MCP clients (Claude Desktop and an IDE) each running its own `memwal-mcp`:
both processes take remembers and both run a curation worker on the same database. The
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
import random
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.databases import Database

from .conftest import RawServer
from .exactly_once import Request, check_clean, check_exactly_once, fact

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

TOTAL = 2000
SHARED_KEYS = 40  # requests sent to both processes: 80 of the 2,000 lines
NAMESPACES = ("default", "ops", "notes", "team", "infra")
KILL_AFTER_SENT = 600  # of A's share, then SIGKILL once at least KILL_AFTER_ACKED answers arrived
KILL_AFTER_ACKED = 250
STATUS_WAIT_MS = 30_000


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
            singles.append(Request(index, fact(rng, index), rng.choice(NAMESPACES), key))
    shared = [
        Request(len(singles) + i, fact(rng, 5000 + i), rng.choice(NAMESPACES), f"crash-shared-{i:03d}", shared=True)
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


async def test_two_processes_one_sigkill_2000_remembers(server_env, tmp_path: Path, db: Database, raw_servers) -> None:
    env = server_env()
    share_a, share_b = build_shares()
    # Guards against a hang, not timings: generous, as CI machines run this beside other suites.
    with anyio.fail_after(420):
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
        b_jobs = await _collect(b, b_sent, timeout=180)
        a2_jobs = await _collect(a2, a2_sent, timeout=180)

        # Every job id a client was handed, and which request it answered.
        handed: list[tuple[Request, str]] = [
            *((a_sent[r], j) for r, j in acked_by_a.items()),
            *((a2_sent[r], j) for r, j in a2_jobs.items()),
            *((b_sent[r], j) for r, j in b_jobs.items()),
        ]
        assert len(handed) == TOTAL  # A's answered + A2's (the rest of A's share) + B's
        accepted = sorted({job_id for _, job_id in handed})

        outcomes = await _wait_all_done(a2, accepted, deadline_s=180)
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

    check_clean(env)  # the store is consistent by its own checker
    orphans = check_exactly_once(db, handed, distinct)
    # Jobs nobody was told about can only be A's unkeyed requests that were in flight at the kill
    # (inserted, then killed before the reply went out); they are curated like any other.
    assert len(orphans) <= in_flight
    assert all(key is None for (_, _, _, key, _, _) in orphans.values()), orphans
    assert sum(1 for request, _ in handed if request.shared) >= SHARED_KEYS  # from both sides, or A and A2
    memories = db.rows("SELECT occurrences FROM memories")
    print(
        f"crash: A answered {len(acked_by_a)} of {len(a_sent)} sent, {in_flight} in flight at SIGKILL; "
        f"{len(rest)} sent to its replacement; {len(accepted) + len(orphans)} jobs ({len(orphans)} never "
        f"acknowledged), {len(memories)} memories, {sum(row[0] for row in memories)} occurrences"
    )
