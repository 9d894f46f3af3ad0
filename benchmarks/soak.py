"""Soak: many concurrent streamable-HTTP sessions against one `memwal-mcp serve --transport http`.

    python -m benchmarks.soak --sessions 32 --seconds 60

Starts the real server on 127.0.0.1 (a free port) over a fresh database with bearer
tokens made by `memwal-mcp token create`, then runs N MCP sessions at once for S
seconds. Each session loops: memwal_remember with an idempotency key (now and then
the same key again, which must give back the same job), and memwal_recall of what
was stored. Afterwards it verifies, straight from the database file:

- zero protocol errors (exceptions, timeouts, malformed replies) and zero tool errors,
- zero lost writes: every acknowledged job id is in the journal, and done,
- no "database is locked" in any reply or in the server log (and no traceback there),

and prints latency p50/p99 per tool, throughput and errors as a table, then as JSON.
Exit status 0 when every check holds, 1 otherwise. Loopback only; every loop is
bounded by the deadline and every call by a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
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
    parser.add_argument("--call-timeout", type=float, default=30.0, help="seconds before a call counts as lost")
    parser.add_argument("--drain-timeout", type=float, default=120.0, help="seconds to wait for curation to finish")
    parser.add_argument("--db", type=Path, default=None, help="database file (must not exist); default a temp dir")
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
    if any(not item.startswith("MEMWAL_") or "=" not in item for item in args.server_env):
        parser.error("--server-env takes MEMWAL_NAME=VALUE")
    return args


# --- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(folder: Path, db_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / "xdg-config"),
        "XDG_DATA_HOME": str(folder / "xdg-data"),
        "XDG_CACHE_HOME": str(folder / "xdg-cache"),
        "MEMWAL_DB_PATH": str(db_path),
        "PYTHONUNBUFFERED": "1",
        # The soak measures the server, not the per-token rate limit.
        "MEMWAL_AUTH__RATE_PER_MINUTE": "1000000",
        "MEMWAL_AUTH__BURST": "100000",
    }


def make_token(env: dict[str, str], owner: str) -> str:
    made = subprocess.run(
        [str(MEMWAL), "token", "create", "--owner", owner, "--scope", "read,write"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
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
    sessions_done: int = 0


def _fact(rng: random.Random, session: int, n: int) -> str:
    return (
        f"{rng.choice(_WHO)} says the {rng.choice(_TOPIC)} is {rng.choice(_VALUE)} "
        f"(session {session}, note {n}, ref {rng.randrange(10**6):06d})"
    )


async def run_session(
    index: int,
    url: str,
    token: str,
    owner: str,
    namespace: str,
    deadline: float,
    args: argparse.Namespace,
    tally: Tally,
) -> None:
    rng = random.Random(args.seed * 100_003 + index)
    stored: list[str] = []
    last: tuple[str, str, str] | None = None  # key, text, job id
    try:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=args.call_timeout) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=args.call_timeout) as session:
                    with anyio.fail_after(args.call_timeout):
                        await session.initialize()
                    n = 0
                    while time.monotonic() < deadline and n < 1_000_000:
                        n += 1
                        recall = stored and rng.random() < args.recall_share
                        if recall:
                            tool = "memwal_recall"
                            probe = rng.choice(stored[-20:])
                            arguments: dict[str, Any] = {"query": probe, "namespace": namespace, "limit": 5}
                        else:
                            tool = "memwal_remember"
                            if last is not None and rng.random() < args.replay_share:
                                key, text, _ = last
                            else:
                                key, text = f"soak-{index}-{n}", _fact(rng, index, n)
                            arguments = {"text": text, "namespace": namespace, "idempotency_key": key}
                        started = time.perf_counter()
                        try:
                            with anyio.fail_after(args.call_timeout):
                                result = await session.call_tool(tool, arguments)
                        except Exception as exc:  # a timeout, a transport or protocol failure
                            tally.protocol_errors.append(f"{tool}: {type(exc).__name__}: {exc}"[:300])
                            continue
                        elapsed = time.perf_counter() - started
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
                            if arguments["text"] not in stored:
                                stored.append(arguments["text"])
                        elif probe not in [hit["text"] for hit in data["hits"]]:
                            tally.recall_misses += 1
    except Exception as exc:  # the session itself broke (connect, initialize, close)
        tally.protocol_errors.append(f"session {index}: {type(exc).__name__}: {exc}"[:300])
    else:
        tally.sessions_done += 1


# --- verification and report ------------------------------------------------------------------------


def _connect(db_path: Path) -> sqlite3.Connection:
    from memwal_mcp.store.sqlite.connection import connect  # the same SQLite (with sqlite-vec) the server uses

    return connect(db_path)


def wait_drained(db_path: Path, timeout: float) -> tuple[int, float]:
    """Wait until no job is queued; returns (queued left, seconds waited)."""
    started = time.monotonic()
    queued = -1
    while time.monotonic() - started < timeout:
        conn = _connect(db_path)
        try:
            queued = conn.execute("SELECT count(*) FROM remember_jobs WHERE status = 'queued'").fetchone()[0]
        finally:
            conn.close()
        if queued == 0:
            break
        time.sleep(0.25)
    return queued, time.monotonic() - started


def lost_writes(db_path: Path, acknowledged: dict[str, str]) -> tuple[list[str], dict[str, int]]:
    conn = _connect(db_path)
    try:
        rows = {row[0]: row[1:] for row in conn.execute("SELECT id, status, owner, memory_id FROM remember_jobs")}
        statuses = dict(conn.execute("SELECT status, count(*) FROM remember_jobs GROUP BY status").fetchall())
    finally:
        conn.close()
    lost = [
        job_id
        for job_id, owner in acknowledged.items()
        if job_id not in rows or rows[job_id][0] != "done" or rows[job_id][1] != owner or not rows[job_id][2]
    ]
    return lost, statuses


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
    statuses: dict[str, int],
    drained: tuple[int, float],
    log_text: str,
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
        "server_env": args.server_env,
        "cpus": os.cpu_count(),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "elapsed_s": round(elapsed, 2),
        "throughput_calls_per_s": round(sum(len(v) for v in tally.latencies.values()) / elapsed, 1),
        "tools": tools,
        "acknowledged_jobs": len(tally.acknowledged),
        "idempotent_replays": tally.replays,
        "recall_misses": tally.recall_misses,
        # Recalls whose read-your-writes wait ran out, so they scored queued jobs' text themselves.
        "recall_pending_fallbacks": log_text.count("are not curated yet"),
        "jobs_by_status": statuses,
        "drain_s": round(drained[1], 2),
        "checks": checks,
        "ok": all(value == 0 for value in checks.values()) and tally.sessions_done == args.sessions,
        "sessions_completed": tally.sessions_done,
        "examples": {
            "protocol_errors": tally.protocol_errors[:5],
            "tool_errors": tally.tool_errors[:5],
            "lost_writes": lost[:5],
            "replay_mismatches": tally.replay_mismatches[:5],
        },
    }


def print_table(result: dict[str, Any]) -> None:
    print(
        f"soak: {result['sessions']} sessions x {result['seconds']:g} s "
        f"({result['owners']} owners, {result['namespaces_per_owner']} namespaces each), "
        f"{result['elapsed_s']} s elapsed"
    )
    print(f"{'tool':<18} {'calls':>7} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for tool, row in result["tools"].items():
        cells = [f"{row[k]:>8}" if row[k] is not None else f"{'-':>8}" for k in ("per_s", "p50_ms", "p99_ms", "max_ms")]
        print(f"{tool:<18} {row['calls']:>7} {' '.join(cells)}")
    print(
        f"throughput: {result['throughput_calls_per_s']} calls/s; {result['acknowledged_jobs']} jobs acknowledged "
        f"({result['idempotent_replays']} idempotent replays); curation drained {result['drain_s']} s after the end"
    )
    print(
        "checks: "
        + ", ".join(f"{k}={v}" for k, v in result["checks"].items())
        + f", recall_misses={result['recall_misses']}, recall_pending_fallbacks={result['recall_pending_fallbacks']}"
    )
    print("OK" if result["ok"] else "FAILED")


async def soak(args: argparse.Namespace, url: str, tokens: list[tuple[str, str]]) -> tuple[Tally, float]:
    tally = Tally()
    started = time.monotonic()
    deadline = started + args.seconds
    with anyio.fail_after(args.seconds + 4 * args.call_timeout + 30):
        async with anyio.create_task_group() as group:
            for index in range(args.sessions):
                owner, token = tokens[index % len(tokens)]
                namespace = f"ns-{(index // len(tokens)) % args.namespaces}"
                group.start_soon(run_session, index, url, token, owner, namespace, deadline, args, tally)
    return tally, time.monotonic() - started


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memwal-soak-") as folder_name:
        folder = Path(folder_name)
        db_path = args.db or folder / "memwal.db"
        if db_path.exists():
            raise SystemExit(f"{db_path} exists; the soak wants a fresh database")
        env = server_env(folder, db_path)
        env.update(item.split("=", 1) for item in args.server_env)
        tokens = [(f"soak-owner-{i}", make_token(env, f"soak-owner-{i}")) for i in range(args.owners)]
        port = free_port()
        log_path = folder / "server.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [str(MEMWAL), "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
                env=env,
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            wait_for_port(port, proc, log_path)
            print(f"server pid {proc.pid} on 127.0.0.1:{port}, database {db_path}", file=sys.stderr)
            tally, elapsed = anyio.run(soak, args, f"http://127.0.0.1:{port}/mcp", tokens)
            drained = wait_drained(db_path, args.drain_timeout)
        finally:
            code = stop(proc)
        lost, statuses = lost_writes(db_path, tally.acknowledged)
        log_text = log_path.read_text(errors="replace")
        result = report(args, tally, elapsed, lost, statuses, drained, log_text)
        result["server_exit"] = code
    print_table(result)
    print(json.dumps(result, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
