"""Three `memwal-mcp serve --transport http` replicas on one PostgreSQL database, as behind a load
balancer: a burst of remembers spread over them round-robin, one replica SIGKILLed mid-burst and
started again on its port.

Each client sends every remember with an idempotency key and, as a client behind a load balancer
does, sends a request that met a connection error (the replica is gone, or its reply was cut off)
or a session the replica no longer knows (it restarted) again, unchanged, to the next replica.
Curation is on, with the scripted OpenAI-compatible LLM answering CREATE to every nomination: the
LLM tier is asked while a replica dies, and the outcome does not depend on which replica curated
which job.

Afterwards every job a client was handed is done exactly once (tests/e2e/exactly_once.py) and no
other job exists (every request had a key); `memwal-mcp check` is clean; and the same recalls give
the same answers from each replica.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.databases import PostgresDatabase
from tests.e2e.conftest import CALL_TIMEOUT_S, base_env, free_port, stop_process
from tests.e2e.exactly_once import Request, check_clean, check_exactly_once, fact
from tests.e2e.http_helpers import Served, bearer, make_token, open_session, reply_of, spawn_server, tool_call
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.slow

REPLICAS = 3
CLIENTS = 6
PER_CLIENT = 50  # 300 remembers
NAMESPACES = ("default", "ops", "team")
KILL_AFTER_ACKED = 100  # remembers answered before the SIGKILL
DOWN_S = 1.0  # how long the killed replica stays down
STATUS_WAIT_MS = 20_000  # under the HTTP client's timeout


@dataclass
class Replica:
    """One `memwal-mcp serve --transport http` behind the load balancer, always on its port."""

    index: int
    env: dict[str, str]
    folder: Path
    port: int = field(default_factory=free_port)
    served: Served | None = None
    starts: int = 0
    waiting: int = 0  # remembers with wait_ms it holds open now

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def spawn(self) -> Served:
        self.starts += 1
        self.served = spawn_server(self.env, self.folder, self.port, name=f"replica-{self.index}-{self.starts}")
        return self.served

    def start(self) -> None:
        self.spawn().wait_ready()

    def kill(self) -> None:
        """SIGKILL and reap (a zombie would still look alive to the lease check of the others)."""
        assert self.served is not None
        self.served.proc.kill()
        self.served.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.served is not None:
            stop_process(self.served.proc)


@dataclass
class Client:
    """One MCP client behind a load balancer: its n-th call goes to replica (offset + n) % 3, and
    to the next one whenever a replica cannot answer it."""

    http: httpx2.AsyncClient
    replicas: Sequence[Replica]
    token: str
    offset: int
    sessions: dict[int, str] = field(default_factory=dict)
    retries: int = 0  # calls sent again to the next replica
    cut_off: int = 0  # of them, calls a replica took and never answered

    async def call(self, n: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(20):
            replica = self.replicas[(self.offset + n + attempt) % len(self.replicas)]
            try:
                return await self.call_on(replica, tool, arguments)
            except (httpx2.TransportError, SessionLost) as exc:
                self.retries += 1
                self.cut_off += not isinstance(exc, (httpx2.ConnectError, SessionLost))  # sent, no reply
                await anyio.sleep(0.05 * attempt)
        raise AssertionError(f"no replica answered {tool} {arguments} in 20 tries")

    async def call_on(self, replica: Replica, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's structured result from this replica; raises if the replica cannot answer."""
        waits = "wait_ms" in arguments
        replica.waiting += waits
        try:
            if replica.index not in self.sessions:
                self.sessions[replica.index] = await open_session(self.http, replica.url, self.token)
            response = await tool_call(
                self.http, replica.url, self.sessions[replica.index], tool, arguments, self.token
            )
            if response.status_code == 404:  # a session the restarted replica never opened
                raise SessionLost(replica.url)
            assert response.status_code == 200, (response.status_code, response.text)
            reply = reply_of(response)
        except (httpx2.TransportError, SessionLost):
            self.sessions.pop(replica.index, None)
            raise
        finally:
            replica.waiting -= waits
        assert "result" in reply and reply["result"]["isError"] is False, reply
        return dict(reply["result"]["structuredContent"])


class SessionLost(Exception):
    """The replica answered 404 for the session: it restarted since the session was opened."""


def _requests(seed: int = 18) -> list[list[Request]]:
    """Each client's remembers, every one keyed; about one in seven repeats an earlier fact exactly."""
    rng = random.Random(seed)
    everything: list[Request] = []
    for index in range(CLIENTS * PER_CLIENT):
        if everything and rng.random() < 0.15:
            earlier = rng.choice(everything)
            everything.append(Request(index, earlier.text, earlier.namespace, f"burst-{index:04d}"))
        else:
            everything.append(Request(index, fact(rng, index), rng.choice(NAMESPACES), f"burst-{index:04d}"))
    return [everything[client::CLIENTS] for client in range(CLIENTS)]


async def test_three_replicas_one_sigkilled_mid_burst(pg_url: str, tmp_path: Path) -> None:
    with ScriptedLLM(lambda request: Reply("CREATE")) as llm:
        env = base_env(
            tmp_path,
            PostgresDatabase(pg_url),
            MEMWAL_LLM__BASE_URL=llm.base_url,
            MEMWAL_LLM__MODEL="scripted",
            MEMWAL_LLM__TIMEOUT_S="5",
            MEMWAL_AUTH__BURST="100000",
            MEMWAL_AUTH__RATE_PER_MINUTE="1000000",
        )
        token = make_token(env, "team")
        replicas = [Replica(index, env, tmp_path) for index in range(REPLICAS)]
        shares = _requests()
        handed: list[tuple[Request, str]] = []
        replayed: list[bool] = []  # a call sent again after its replica filed it, and died
        victim = replicas[1]
        took: dict[str, float] = {}
        started = time.monotonic()
        try:
            for served in [replica.spawn() for replica in replicas]:  # all at once, as a deployment does
                served.wait_ready()
            took["start"] = time.monotonic() - started
            async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S, headers=bearer(token)) as http:
                clients = [Client(http, replicas, token, offset) for offset in range(CLIENTS)]

                async def burst(client: Client, share: list[Request]) -> None:
                    for n, request in enumerate(share):
                        # Every fourth waits for its outcome, which holds the call open on its replica.
                        arguments = {**request.arguments(), **({"wait_ms": 5000} if n % 4 == 3 else {})}
                        job = await client.call(n, "memwal_remember", arguments)
                        handed.append((request, job["job_id"]))
                        replayed.append(job["replayed"])

                async def kill_and_restart() -> None:
                    # Mid-burst, while the victim holds a remember it has filed and not yet answered:
                    # the pause lets it file the call; a call answered meanwhile (its job curated
                    # within the pause) is not mid-burst, so wait for another one.
                    while len(handed) < CLIENTS * PER_CLIENT:
                        if len(handed) >= KILL_AFTER_ACKED and victim.waiting:
                            await anyio.sleep(0.1)
                            if victim.waiting:
                                break
                        await anyio.sleep(0.005)
                    victim.kill()
                    await anyio.sleep(DOWN_S)
                    await anyio.to_thread.run_sync(victim.start)

                with anyio.fail_after(240):
                    async with anyio.create_task_group() as group:
                        group.start_soon(kill_and_restart)
                        for client, share in zip(clients, shares):
                            group.start_soon(burst, client, share)
                    took["burst"] = time.monotonic() - started - sum(took.values())
                    assert len(handed) == CLIENTS * PER_CLIENT
                    assert victim.starts == 2
                    retried = sum(client.retries for client in clients)
                    cut_off = sum(client.cut_off for client in clients)
                    assert cut_off > 0, "the SIGKILL cut no call short: nothing was mid-burst"

                    job_ids = sorted({job_id for _, job_id in handed})
                    for start in range(0, len(job_ids), 50):
                        status = await clients[0].call(
                            start // 50,
                            "memwal_remember_status",
                            {"job_ids": job_ids[start : start + 50], "wait_ms": STATUS_WAIT_MS},
                        )
                        assert all(job["status"] == "done" for job in status["jobs"]), status
                    took["curated"] = time.monotonic() - started - sum(took.values())

                    # The same question, the same answer, from every replica.
                    distinct = sorted({(r.namespace, r.text) for share in shares for r in share})
                    queries = [text for _, text in random.Random(3).sample(distinct, 6)]
                    queries += ["billing API", "who rotates the TLS certificates", "Kafka topics on Mondays"]
                    for query in queries:
                        arguments = {"query": query, "namespace": "*", "limit": 10}
                        answers = [
                            await clients[0].call_on(replica, "memwal_recall", arguments) for replica in replicas
                        ]
                        assert answers[0]["hits"], query
                        assert answers[1] == answers[0] and answers[2] == answers[0], query
                    took["recalls"] = time.monotonic() - started - sum(took.values())
        finally:
            for replica in replicas:
                replica.stop()

    for log in sorted(tmp_path.glob("replica-*.log")):
        assert "Traceback" not in log.read_text(errors="replace"), log.name
    check_clean(env)
    orphans = check_exactly_once(PostgresDatabase(pg_url), handed, distinct)
    assert orphans == {}, "a job no client was handed (every request had a key)"
    nominated = len(llm.requests)
    assert nominated > 0, "curation never asked the LLM"
    print(
        f"replicas: {len(handed)} remembers over {REPLICAS} replicas, replica 1 SIGKILLed after {KILL_AFTER_ACKED}; "
        f"{retried} calls sent again ({cut_off} cut off, {sum(replayed)} replayed); {len(job_ids)} jobs; "
        f"{nominated} LLM decisions; seconds: " + ", ".join(f"{phase} {s:.1f}" for phase, s in took.items())
    )
