"""Soak: many concurrent streamable-HTTP sessions against `memwal-mcp serve --transport http`.

    python -m benchmarks.soak --sessions 32 --seconds 60
    python -m benchmarks.soak --replicas 3 --pgserver --seconds 120          # a throwaway PostgreSQL
    python -m benchmarks.soak --replicas 3 --db-url postgresql://... --seconds 120
    python -m benchmarks.soak --pgserver --replicas 3 --kill-every 0 --recall-share 0 --replay-share 0  # throughput

Starts the real server on 127.0.0.1 (free ports) over a fresh database with bearer
tokens made by `memwal-mcp token create`, then runs N MCP sessions at once for S
seconds. Each session loops: memwal_remember with an idempotency key (now and then
the same key again, which must give back the same job), and memwal_recall of what
was stored.

With `--replicas R` (R > 1), R stateless replicas share the database, sessions are spread
over them round-robin, and every `--kill-every` seconds one replica, chosen at random, is
SIGKILLed and restarted on its port. A session whose replica dies moves to the next one and
resends the call it was making, with the same idempotency key, as a client behind a load
balancer would; that is a failover, not an error, as long as the resent call succeeds.

Afterwards it verifies, through memwal-mcp's own commands (so the same on SQLite and PostgreSQL):

- zero protocol errors (calls that failed on every replica they were tried on) and zero tool errors,
- zero lost writes: every acknowledged job id is in the journal, and done; zero doubled
  writes: no idempotency key with two jobs, no text with two live memories in one namespace,
- `memwal-mcp check` clean, and every replica giving the same answer to the same recalls,
- no "database is locked" in any reply or in a server log (and no traceback there),

and prints latency p50/p99 per tool, throughput and errors as a table, then as JSON, with
curation's pace (jobs queued when the load stopped, how long they took to drain, jobs done per
second from the start until drained) and where the CPU went (seconds used by the client, the
replicas and PostgreSQL, and the machine's busy share over the run): with every process on the
same cores, that says whether more replicas could have helped.
Exit status 0 when every check holds, 1 otherwise. Loopback only; every loop is
bounded by the deadline and every call by a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
LOCKED = "database is locked"

_WHO = ("Ana", "Bilal", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lea")
_TOPIC = (
    "deploy window",
    "coffee order",
    "on-call rotation",
    "staging database",
    "release train",
    "VPN gateway",
    "design review",
    "backup policy",
    "API quota",
    "standup time",
    "build cache",
    "cert renewal",
)
_VALUE = (
    "Fridays 14:00 UTC",
    "oat flat white",
    "every second week",
    "PostgreSQL 16 on db-2",
    "v2.4.1 on Tuesday",
    "vpn.eu.example.org:443",
    "Thursdays in room 4",
    "nightly at 02:30",
    "5,000 calls per hour",
    "9:30 sharp",
    "/var/cache/build",
    "every 60 days",
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=32, help="concurrent MCP sessions (default 32)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the sessions run (default 60)")
    parser.add_argument("--owners", type=int, default=4, help="token owners the sessions are spread over (default 4)")
    parser.add_argument("--namespaces", type=int, default=4, help="namespaces per owner (default 4)")
    parser.add_argument("--recall-share", type=float, default=0.5, help="share of calls that are recalls (default 0.5)")
    parser.add_argument(
        "--replay-share", type=float, default=0.1, help="share of remembers that resend the previous key (default 0.1)"
    )
    parser.add_argument("--replicas", type=int, default=1, help="servers on the one database (default 1)")
    parser.add_argument(
        "--kill-every",
        type=float,
        default=20.0,
        help="with --replicas > 1: SIGKILL one replica this often (s); 0: never (a throughput run)",
    )
    parser.add_argument(
        "--stateless", action="store_true", help="serve with --stateless even with one replica (as replicas do)"
    )
    parser.add_argument("--call-timeout", type=float, default=30.0, help="seconds before a call counts as lost")
    parser.add_argument("--drain-timeout", type=float, default=180.0, help="seconds to wait for curation to finish")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--db", type=Path, default=None, help="SQLite file (must not exist); default a temp dir")
    where.add_argument("--db-url", default=None, help="postgresql://... (an empty database) instead of SQLite")
    where.add_argument("--pgserver", action="store_true", help="a throwaway PostgreSQL from the pgserver package")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the JSON there")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra MEMWAL_* setting for the server, e.g. MEMWAL_RECALL__READ_YOUR_WRITES_WAIT_MS=0",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 1024 or args.seconds <= 0 or args.owners < 1 or args.namespaces < 1:
        parser.error("--sessions 1..1024, --seconds > 0, --owners >= 1, --namespaces >= 1")
    if not 1 <= args.replicas <= 16 or args.kill_every < 0:
        parser.error("--replicas 1..16, --kill-every >= 0")
    if any(not item.startswith("MEMWAL_") or "=" not in item for item in args.server_env):
        parser.error("--server-env takes MEMWAL_NAME=VALUE")
    return args


# --- the servers --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(folder: Path, db_path: Path | None, db_url: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / "xdg-config"),
        "XDG_DATA_HOME": str(folder / "xdg-data"),
        "XDG_CACHE_HOME": str(folder / "xdg-cache"),
        "PYTHONUNBUFFERED": "1",
        # The soak measures the server, not the per-token rate limit.
        "MEMWAL_AUTH__RATE_PER_MINUTE": "1000000",
        "MEMWAL_AUTH__BURST": "100000",
    }
    if db_url is not None:
        env["MEMWAL_DB_URL"] = db_url
    else:
        assert db_path is not None
        env["MEMWAL_DB_PATH"] = str(db_path)
    return env


def memwal(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=timeout)


def make_token(env: dict[str, str], owner: str) -> str:
    made = memwal(env, "token", "create", "--owner", owner, "--scope", "read,write", timeout=120)
    if made.returncode != 0 or not made.stdout.strip().startswith("mwk_"):
        raise SystemExit(f"token create failed: {made.stderr}")
    return made.stdout.strip()


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"nothing listened on 127.0.0.1:{port} within {timeout:.0f}s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used (/proc/PID/stat); 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    """Processes whose parent is `pid` (every /proc/N/stat read: not every kernel has .../children)."""
    children: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return children


def postgres_cpu_seconds(pgdata: Path | None) -> float | None:
    """CPU seconds of a pgserver's postmaster and the backends it runs now (a backend that has
    exited is not counted: the soak's replicas keep theirs in pools, so few do)."""
    if pgdata is None:
        return None
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return round(cpu_seconds(postmaster) + sum(cpu_seconds(child) for child in child_pids(postmaster)), 1)


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot (/proc/stat), for the busy share over a span."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return float(sum(values) - idle), float(sum(values))


def stop(proc: subprocess.Popen[bytes]) -> int | None:
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        return None


class Replica:
    """One `memwal-mcp serve` process on a fixed port, which may be killed and started again there."""

    def __init__(self, env: dict[str, str], folder: Path, name: str, stateless: bool) -> None:
        self.env, self.folder, self.name = env, folder, name
        self.port = free_port()
        self.log = folder / f"{name}.log"
        self.extra = ["--stateless"] if stateless else []
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        self.cpu_s = 0.0  # CPU seconds of this replica's processes, counted as each one ends

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        argv = [str(MEMWAL), "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [*argv, *self.extra],
                env=self.env,
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        wait_for_port(self.port, self.proc, self.log)

    def kill(self) -> None:
        assert self.proc is not None
        self.cpu_s += cpu_seconds(self.proc.pid)
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.kills += 1

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        self.cpu_s += cpu_seconds(self.proc.pid)
        return stop(self.proc)


# --- the load ---------------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"memwal_remember": [], "memwal_recall": []})
    protocol_errors: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)
    locked_replies: int = 0
    acknowledged: dict[str, str] = field(default_factory=dict)  # job id -> owner
    replay_mismatches: list[str] = field(default_factory=list)
    replays: int = 0
    recall_misses: int = 0
    failovers: int = 0
    sessions_done: int = 0
    stored: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (owner, namespace) -> texts


def _fact(rng: random.Random, session: int, n: int) -> str:
    return (
        f"{rng.choice(_WHO)} says the {rng.choice(_TOPIC)} is {rng.choice(_VALUE)} "
        f"(session {session}, note {n}, ref {rng.randrange(10**6):06d})"
    )


class _ReplicaDied(Exception):
    """A call's transport failed: the session moves to the next replica and resends it."""


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
    try:
        with anyio.fail_after(timeout):
            return await session.call_tool(tool, arguments)
    except Exception as exc:  # a timeout, a transport or protocol failure
        raise _ReplicaDied(f"{tool}: {type(exc).__name__}: {exc}"[:300]) from exc


async def run_session(
    index: int,
    urls: list[str],
    token: str,
    owner: str,
    namespace: str,
    deadline: float,
    args: argparse.Namespace,
    tally: Tally,
) -> None:
    rng = random.Random(args.seed * 100_003 + index)
    stored = tally.stored.setdefault((owner, namespace), [])
    mine: list[str] = []
    last: tuple[str, str, str] | None = None  # key, text, job id
    pending: tuple[str, dict[str, Any]] | None = None  # the call a dead replica did not answer
    tries = 0  # replicas the pending call has failed on
    replica = index % len(urls)
    n = 0
    while time.monotonic() < deadline and n < 1_000_000:
        try:
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=args.call_timeout)
                )
                read, write = await stack.enter_async_context(streamable_http_client(urls[replica], http_client=http))
                session = await stack.enter_async_context(
                    ClientSession(read, write, read_timeout_seconds=args.call_timeout)
                )
                try:
                    with anyio.fail_after(args.call_timeout):
                        await session.initialize()
                except Exception as exc:
                    raise _ReplicaDied(f"initialize: {type(exc).__name__}: {exc}"[:300]) from exc
                while time.monotonic() < deadline and n < 1_000_000:
                    if pending is None:
                        n += 1
                        if mine and rng.random() < args.recall_share:
                            probe = rng.choice(mine[-20:])
                            pending = ("memwal_recall", {"query": probe, "namespace": namespace, "limit": 5})
                        else:
                            if last is not None and rng.random() < args.replay_share:
                                key, text, _ = last
                            else:
                                key, text = f"soak-{index}-{n}", _fact(rng, index, n)
                            pending = (
                                "memwal_remember",
                                {"text": text, "namespace": namespace, "idempotency_key": key},
                            )
                    tool, arguments = pending
                    started = time.perf_counter()
                    result = await _call(session, tool, arguments, args.call_timeout)
                    elapsed = time.perf_counter() - started
                    pending, tries = None, 0
                    text_out = "\n".join(getattr(b, "text", "") for b in result.content)
                    if LOCKED in text_out.lower() or LOCKED in json.dumps(result.structured_content or {}).lower():
                        tally.locked_replies += 1
                    if result.is_error:
                        tally.tool_errors.append(f"{tool}: {text_out}"[:300])
                        continue
                    if result.structured_content is None:
                        tally.protocol_errors.append(f"{tool}: no structured content")
                        continue
                    tally.latencies[tool].append(elapsed)
                    data = result.structured_content
                    if tool == "memwal_remember":
                        job_id = data["job_id"]
                        if last is not None and arguments["idempotency_key"] == last[0]:
                            tally.replays += 1
                            if job_id != last[2] or data["replayed"] is not True:
                                tally.replay_mismatches.append(f"{last[0]}: {last[2]} then {job_id}")
                        tally.acknowledged[job_id] = owner
                        last = (arguments["idempotency_key"], arguments["text"], job_id)
                        if arguments["text"] not in mine:
                            mine.append(arguments["text"])
                            stored.append(arguments["text"])
                    elif arguments["query"] not in [hit["text"] for hit in data["hits"]]:
                        tally.recall_misses += 1
        except _ReplicaDied as died:
            tries += 1
            if tries > len(urls):  # every replica failed it: not a failover any more
                tally.protocol_errors.append(str(died))
                pending, tries = None, 0
            else:
                tally.failovers += 1
            replica = (replica + 1) % len(urls)
            await anyio.sleep(0.2)
        except Exception as exc:  # connecting or closing the session itself broke
            if len(urls) == 1:
                tally.protocol_errors.append(f"session {index}: {type(exc).__name__}: {exc}"[:300])
                return
            tally.failovers += 1
            replica = (replica + 1) % len(urls)
            await anyio.sleep(0.2)
        else:
            break
    tally.sessions_done += 1


async def killer(replicas: list[Replica], every: float, deadline: float, rng: random.Random) -> None:
    """SIGKILL a random replica every `every` seconds, and start it again on its port."""
    while True:
        await anyio.sleep(every)
        if time.monotonic() >= deadline - 1:
            return
        victim = rng.choice(replicas)
        print(f"SIGKILL {victim.name} (pid {victim.proc.pid if victim.proc else '?'})", file=sys.stderr)
        await anyio.to_thread.run_sync(victim.kill)
        await anyio.to_thread.run_sync(victim.start)


async def soak(args: argparse.Namespace, replicas: list[Replica], tokens: list[tuple[str, str]]) -> tuple[Tally, float]:
    tally = Tally()
    started = time.monotonic()
    deadline = started + args.seconds
    urls = [replica.url for replica in replicas]
    with anyio.fail_after(args.seconds + 4 * args.call_timeout + 60):
        async with anyio.create_task_group() as group:
            for index in range(args.sessions):
                owner, token = tokens[index % len(tokens)]
                namespace = f"ns-{(index // len(tokens)) % args.namespaces}"
                group.start_soon(run_session, index, urls, token, owner, namespace, deadline, args, tally)
            if len(replicas) > 1 and args.kill_every > 0:
                group.start_soon(killer, replicas, args.kill_every, deadline, random.Random(args.seed))
    return tally, time.monotonic() - started


# --- verification and report ------------------------------------------------------------------------


def wait_drained(env: dict[str, str], timeout: float) -> tuple[int, float]:
    """Wait until no job is queued (`memwal-mcp stats`); returns (queued left, seconds waited)."""
    started = time.monotonic()
    queued = -1
    while time.monotonic() - started < timeout:
        done = memwal(env, "stats", "--json")
        if done.returncode == 0:
            queued = json.loads(done.stdout)["queue"].get("queued", 0)
            if queued == 0:
                break
        time.sleep(1.0)
    return queued, time.monotonic() - started


@dataclass
class Journal:
    jobs: dict[str, tuple[str, str, str | None]]  # id -> (status, owner, memory id)
    statuses: dict[str, int]
    doubled: list[str]  # idempotency keys with two jobs; texts with two live memories in one namespace
    done_at: list[float] = field(default_factory=list)  # when each done job was marked done (epoch s)
    first_created: float | None = None  # the first job's arrival (epoch s)


def read_journal(env: dict[str, str], folder: Path) -> Journal:
    """Every job and memory, read back through `memwal-mcp export` (the same on either backend)."""
    out = folder / "export.jsonl"
    done = memwal(env, "export", "--all-owners", "--force", str(out))
    if done.returncode != 0:
        raise SystemExit(f"export failed: {done.stderr}")
    jobs: dict[str, tuple[str, str, str | None]] = {}
    statuses: Counter[str] = Counter()
    keys: Counter[tuple[str, str]] = Counter()
    live: Counter[tuple[str, str, str]] = Counter()
    done_at: list[float] = []
    created: list[float] = []
    with out.open() as lines:
        for line in lines:
            row = json.loads(line)
            if row["type"] == "job":
                jobs[row["id"]] = (row["status"], row["owner"], row["memory_id"])
                statuses[row["status"]] += 1
                created.append(row["created_at"])
                if row["status"] == "done":
                    done_at.append(row["updated_at"])
                if row["idempotency_key"] is not None:
                    keys[(row["owner"], row["idempotency_key"])] += 1
            elif row["type"] == "memory" and row["status"] == "live":
                live[(row["owner"], row["namespace"], row["body"])] += 1
    doubled = [f"key {k}: {n} jobs" for k, n in keys.items() if n > 1]
    doubled += [f"text {t[2][:60]!r}: {n} live memories" for t, n in live.items() if n > 1]
    return Journal(jobs, dict(statuses), doubled, sorted(done_at), min(created, default=None))


def lost_writes(journal: Journal, acknowledged: dict[str, str]) -> list[str]:
    return [
        job_id
        for job_id, owner in acknowledged.items()
        if (row := journal.jobs.get(job_id)) is None or row[0] != "done" or row[1] != owner or not row[2]
    ]


async def recall_answers(url: str, token: str, queries: list[tuple[str, str]], timeout: float) -> list[list[str]]:
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
        )
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout))
        await session.initialize()
        answers = []
        for namespace, query in queries:
            result = await session.call_tool("memwal_recall", {"query": query, "namespace": namespace, "limit": 5})
            hits = (result.structured_content or {}).get("hits", [])
            answers.append([f"{hit['id']}:{hit['score']:.6f}" for hit in hits] if not result.is_error else ["error"])
        return answers


async def replicas_disagree(
    replicas: list[Replica], tokens: list[tuple[str, str]], tally: Tally, timeout: float, rng: random.Random
) -> list[str]:
    """Recalls that some replica answers differently from the first (after the queue drained)."""
    disagreements = []
    for owner, token in tokens:
        queries = [
            (namespace, text)
            for (who, namespace), texts in sorted(tally.stored.items())
            if who == owner
            for text in rng.sample(texts, min(5, len(texts)))
        ]
        answers = [await recall_answers(r.url, token, queries, timeout) for r in replicas]
        for n, query in enumerate(queries):
            if any(other[n] != answers[0][n] for other in answers[1:]):
                disagreements.append(f"{owner} {query[1][:50]!r}: {[a[n][:2] for a in answers]}")
    return disagreements


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def report(
    args: argparse.Namespace,
    tally: Tally,
    elapsed: float,
    lost: list[str],
    journal: Journal,
    drained: tuple[int, float],
    log_text: str,
    check_clean: bool,
    disagreements: list[str],
    kills: int,
    load_ended_at: float = float("inf"),
) -> dict[str, Any]:
    tools = {}
    for tool, values in tally.latencies.items():
        tools[tool] = {
            "calls": len(values),
            "per_s": round(len(values) / elapsed, 1),
            "p50_ms": round(1000 * (percentile(values, 0.50) or 0.0), 1) if values else None,
            "p99_ms": round(1000 * (percentile(values, 0.99) or 0.0), 1) if values else None,
            "max_ms": round(1000 * max(values), 1) if values else None,
        }
    log_locked = log_text.lower().count(LOCKED)
    log_tracebacks = log_text.count("Traceback")
    checks = {
        "protocol_errors": len(tally.protocol_errors),
        "tool_errors": len(tally.tool_errors),
        "lost_writes": len(lost),
        "doubled_writes": len(journal.doubled),
        "check_problems": 0 if check_clean else 1,
        "replica_disagreements": len(disagreements),
        "locked_in_replies": tally.locked_replies,
        "locked_in_server_log": log_locked,
        "tracebacks_in_server_log": log_tracebacks,
        "replay_mismatches": len(tally.replay_mismatches),
        "queued_after_drain": drained[0],
    }
    return {
        "sessions": args.sessions,
        "seconds": args.seconds,
        "owners": args.owners,
        "namespaces_per_owner": args.namespaces,
        "replicas": args.replicas,
        "backend": "postgresql" if (args.db_url or args.pgserver) else "sqlite",
        "replica_kills": kills,
        "server_env": args.server_env,
        "cpus": os.cpu_count(),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "elapsed_s": round(elapsed, 2),
        "throughput_calls_per_s": round(sum(len(v) for v in tally.latencies.values()) / elapsed, 1),
        "tools": tools,
        "acknowledged_jobs": len(tally.acknowledged),
        "idempotent_replays": tally.replays,
        "failovers": tally.failovers,
        "recall_misses": tally.recall_misses,
        # Recalls whose read-your-writes wait ran out, so they scored queued jobs' text themselves.
        "recall_pending_fallbacks": log_text.count("are not curated yet"),
        "jobs_by_status": journal.statuses,
        "drain_s": round(drained[1], 2),
        "curation": curation_pace(journal, load_ended_at),
        "checks": checks,
        "ok": all(value == 0 for value in checks.values()) and tally.sessions_done == args.sessions,
        "sessions_completed": tally.sessions_done,
        "examples": {
            "protocol_errors": tally.protocol_errors[:5],
            "tool_errors": tally.tool_errors[:5],
            "lost_writes": lost[:5],
            "doubled_writes": journal.doubled[:5],
            "replay_mismatches": tally.replay_mismatches[:5],
            "replica_disagreements": disagreements[:5],
        },
    }


def curation_pace(journal: Journal, load_ended_at: float) -> dict[str, Any]:
    """Curation's pace from the journal's own times (each job's arrival and when it was marked
    done), not from polling: jobs done per second from the first arrival to the last done, how
    many were still queued when the load stopped, and how long after that the last was done."""
    done = journal.done_at
    if not done or journal.first_created is None:
        return {"done": 0, "done_per_s_until_drained": None, "queued_when_load_stopped": None, "drained_after_s": None}
    span = max(1e-9, done[-1] - journal.first_created)
    return {
        "done": len(done),
        "done_per_s_until_drained": round(len(done) / span, 1),
        "queued_when_load_stopped": sum(at > load_ended_at for at in done),
        "drained_after_s": round(max(0.0, done[-1] - load_ended_at), 1),
    }


def print_table(result: dict[str, Any]) -> None:
    print(
        f"soak: {result['sessions']} sessions x {result['seconds']:g} s "
        f"({result['owners']} owners, {result['namespaces_per_owner']} namespaces each), "
        f"{result['replicas']} replica(s) on {result['backend']}, {result['replica_kills']} SIGKILLed, "
        f"{result['elapsed_s']} s elapsed"
    )
    print(f"{'tool':<18} {'calls':>7} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for tool, row in result["tools"].items():
        cells = [f"{row[k]:>8}" if row[k] is not None else f"{'-':>8}" for k in ("per_s", "p50_ms", "p99_ms", "max_ms")]
        print(f"{tool:<18} {row['calls']:>7} {' '.join(cells)}")
    print(
        f"throughput: {result['throughput_calls_per_s']} calls/s; {result['acknowledged_jobs']} jobs acknowledged "
        f"({result['idempotent_replays']} idempotent replays, {result['failovers']} failovers); "
        f"curation drained {result['drain_s']} s after the end"
    )
    curation = result["curation"]
    print(
        f"curation: {curation['done']} jobs done, {curation['done_per_s_until_drained']}/s from the first arrival"
        f" to the last done; {curation['queued_when_load_stopped']} still queued when the load stopped, the last"
        f" done {curation['drained_after_s']} s after it"
    )
    if "cpu" in result:
        cpu = result["cpu"]
        print(
            f"CPU seconds: client {cpu['client_s']}, replicas {cpu['replicas_s']} (each {cpu['per_replica_s']}),"
            f" PostgreSQL {cpu['postgresql_s'] if cpu['postgresql_s'] is not None else '-'};"
            f" machine busy {cpu['machine_busy_share']:.0%} of {cpu['cpus']} CPUs during the load"
            f" (load average at end {result['load_average_1m_at_end']})"
        )
    print(
        "checks: "
        + ", ".join(f"{k}={v}" for k, v in result["checks"].items())
        + f", recall_misses={result['recall_misses']}, recall_pending_fallbacks={result['recall_pending_fallbacks']}"
    )
    print("OK" if result["ok"] else "FAILED")


def _database(args: argparse.Namespace, folder: Path) -> tuple[Path | None, str | None, Any]:
    """(SQLite path, PostgreSQL URL, a pgserver to stop afterwards) for this run."""
    if args.pgserver:
        import pgserver

        server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
        return None, server.get_uri(), server
    if args.db_url:
        return None, args.db_url, None
    db_path = args.db or folder / "memwal.db"
    if db_path.exists():
        raise SystemExit(f"{db_path} exists; the soak wants a fresh database")
    return db_path, None, None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memwal-soak-") as folder_name:
        folder = Path(folder_name)
        db_path, db_url, pg = _database(args, folder)
        try:
            pgdata = folder / "pgdata" if pg is not None else None
            result = _run(args, folder, server_env(folder, db_path, db_url), pgdata)
        finally:
            if pg is not None:
                pg.cleanup()
                shutil.rmtree(folder / "pgdata", ignore_errors=True)
    print_table(result)
    print(json.dumps(result, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["ok"] else 1


def _run(args: argparse.Namespace, folder: Path, env: dict[str, str], pgdata: Path | None = None) -> dict[str, Any]:
    env.update(item.split("=", 1) for item in args.server_env)
    tokens = [(f"soak-owner-{i}", make_token(env, f"soak-owner-{i}")) for i in range(args.owners)]
    stateless = args.replicas > 1 or args.stateless
    replicas = [Replica(env, folder, f"replica-{i}", stateless=stateless) for i in range(args.replicas)]
    try:
        for replica in replicas:
            replica.start()
        where = env.get("MEMWAL_DB_URL") or env.get("MEMWAL_DB_PATH")
        print(f"{len(replicas)} server(s) on ports {[r.port for r in replicas]}, database {where}", file=sys.stderr)
        pg_before = postgres_cpu_seconds(pgdata)
        client_before = time.process_time()
        replicas_before = [cpu_seconds(r.proc.pid) if r.proc else 0.0 for r in replicas]
        busy_before = machine_busy()
        tally, elapsed = anyio.run(soak, args, replicas, tokens)
        load_ended_at = time.time()
        busy_after = machine_busy()
        client_s = time.process_time() - client_before
        replicas_s = [r.cpu_s + (cpu_seconds(r.proc.pid) if r.proc else 0.0) for r in replicas]
        pg_after = postgres_cpu_seconds(pgdata)
        drained = wait_drained(env, args.drain_timeout)
        disagreements = anyio.run(
            replicas_disagree, replicas, tokens, tally, args.call_timeout, random.Random(args.seed + 1)
        )
    finally:
        codes = [replica.stop() for replica in replicas]
    journal = read_journal(env, folder)
    lost = lost_writes(journal, tally.acknowledged)
    check = memwal(env, "check")
    if check.returncode != 0:
        print(f"memwal-mcp check:\n{check.stdout}{check.stderr}", file=sys.stderr)
    log_text = "".join(replica.log.read_text(errors="replace") for replica in replicas)
    kills = sum(replica.kills for replica in replicas)
    result = report(
        args,
        tally,
        elapsed,
        lost,
        journal,
        drained,
        log_text,
        check.returncode == 0,
        disagreements,
        kills,
        load_ended_at,
    )
    result["server_exits"] = codes
    per_replica = [round(after - before, 1) for before, after in zip(replicas_before, replicas_s)]
    result["stateless"] = stateless
    result["cpu"] = {  # over the load only (not the drain), as CPU seconds
        "cpus": os.cpu_count(),
        "client_s": round(client_s, 1),
        "replicas_s": round(sum(per_replica), 1),
        "per_replica_s": per_replica,
        "postgresql_s": round(pg_after - pg_before, 1) if pg_before is not None and pg_after is not None else None,
        "machine_busy_share": round((busy_after[0] - busy_before[0]) / max(1.0, busy_after[1] - busy_before[1]), 3),
    }
    return result


if __name__ == "__main__":
    sys.exit(main())
