"""Subprocess parts of the speed benchmark: the machine, cold start, calls over stdio, peak RSS.

The server is the real `memwal-mcp` console script next to this interpreter, spoken
to by the real `mcp` client (stdio) -- or, for cold start, by plain JSON-RPC lines,
so the figure is the server's and not the client library's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import platform
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

log = logging.getLogger("benchmarks.speed")

MEMWAL = Path(sys.executable).parent / "memwal-mcp"
START_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 120.0  # a recall over a 1M lane may be slow; a hang still fails

MINIMAL_SERVER = """\
from mcp.server.mcpserver import MCPServer

s = MCPServer("min")


@s.tool()
def ping() -> str:
    return "pong"


s.run()
"""


# --- the machine ---------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def machine_info() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo")
    model = next(
        (line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    meminfo = _read("/proc/meminfo").splitlines()
    mem_kb = next((int(line.split()[1]) for line in meminfo if line.startswith("MemTotal")), 0)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 1
    info: dict[str, Any] = {
        "cpu": model,
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_gib": round(mem_kb / 2**20, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": _loadavg(),
    }
    from memwal_mcp.store.sqlite.connection import sqlite_module

    module = sqlite_module()
    conn = module.connect(":memory:")
    try:
        from memwal_mcp.store.sqlite.connection import _load_vec  # the same loader the store uses

        _load_vec(conn)
        vec = conn.execute("SELECT vec_version()").fetchone()[0]
    except Exception:
        vec = "unavailable"
    finally:
        conn.close()
    info["sqlite"] = f"{module.__name__} (SQLite {module.sqlite_version}, sqlite-vec {vec})"
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for package in ("memwal-mcp", "mcp", "fastembed", "onnxruntime", "numpy", "aiosqlite"):
        with contextlib.suppress(PackageNotFoundError):
            versions[package] = version(package)
    info["packages"] = versions
    info["code"] = _git_describe()
    return info


def _git_describe() -> str | None:
    """The commit of the checkout being measured, `-dirty` when it has local changes."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _loadavg() -> list[float]:
    with contextlib.suppress(OSError):
        return [round(x, 2) for x in os.getloadavg()]
    return []


def loadavg() -> list[float]:
    return _loadavg()


# --- peak RSS -------------------------------------------------------------------------


def vm_hwm(pid: int) -> int | None:
    """Peak resident set size of a live process, bytes (Linux /proc)."""
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def child_pids(name: str) -> list[int]:
    """Pids of our direct children whose command line mentions `name`."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _read(f"/proc/{entry}/stat")
        try:
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        if ppid == me and name in _read(f"/proc/{entry}/cmdline"):
            found.append(int(entry))
    return found


# --- environment -------------------------------------------------------------------------


def server_env(db_path: Path | None) -> dict[str, str]:
    """Our environment (MEMWAL_* settings apply, as in-process) without the LLM tier, plus the database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMWAL_LLM__", "MEMWAL_DB_PATH"))}
    env["PYTHONUNBUFFERED"] = "1"
    if db_path is not None:
        env["MEMWAL_DB_PATH"] = str(db_path)
    return env


# --- cold start ---------------------------------------------------------------------------


async def _read_reply(stdout: asyncio.StreamReader, request_id: int) -> dict[str, Any]:
    while True:
        line = await stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout before replying")
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == request_id:
                return message


async def time_to_tools_list(command: Sequence[str], env: dict[str, str], stderr_path: Path) -> tuple[float, int]:
    """Seconds from spawning `command` to its `tools/list` reply (after initialize), and the tool count."""
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    with stderr_path.open("ab") as errlog:
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errlog,
            env=env,
            limit=16 * 1024 * 1024,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            with anyio.fail_after(START_TIMEOUT_S):
                init = {
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "memwal-speed", "version": "1"},
                }
                proc.stdin.write(
                    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}) + "\n").encode()
                )
                await proc.stdin.drain()
                await _read_reply(proc.stdout, 1)
                proc.stdin.write(
                    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
                    b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\n'
                )
                await proc.stdin.drain()
                reply = await _read_reply(proc.stdout, 2)
                elapsed = time.perf_counter() - started
            tools = len(reply.get("result", {}).get("tools", []))
        finally:
            proc.stdin.close()
            try:
                with anyio.fail_after(15):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()
    return elapsed, tools


@dataclass
class ColdStart:
    memwal_s: list[float] = field(default_factory=list)
    minimal_s: list[float] = field(default_factory=list)
    memwal_tools: int = 0


async def cold_start(db_path: Path, runs: int, workdir: Path) -> ColdStart:
    """Interleaved runs of memwal-mcp and a one-tool SDK server, after one untimed run of each."""
    script = workdir / "minimal_mcp_server.py"
    script.write_text(MINIMAL_SERVER, encoding="utf-8")
    memwal = ([str(MEMWAL)], server_env(db_path))
    minimal = ([sys.executable, str(script)], server_env(None))
    stderr_path = workdir / "cold-start.stderr.log"
    out = ColdStart()
    for command, env in (memwal, minimal):  # warm the page cache and .pyc files
        await time_to_tools_list(command, env, stderr_path)
    for _ in range(runs):
        seconds, out.memwal_tools = await time_to_tools_list(*memwal, stderr_path)
        out.memwal_s.append(seconds)
        out.minimal_s.append((await time_to_tools_list(*minimal, stderr_path))[0])
    return out


# --- calls over stdio --------------------------------------------------------------------


@dataclass
class StdioFigures:
    recall_ms: list[float] = field(default_factory=list)
    remember_ms: list[float] = field(default_factory=list)
    remembers_curated: int = 0  # of those remembers, curated by the server's worker before the last reply
    peak_rss: int | None = None


@contextlib.asynccontextmanager
async def stdio_session(
    command: Sequence[str], env: dict[str, str], stderr_path: Path
) -> AsyncIterator[tuple[Any, int | None]]:
    """The real mcp client over stdio to `command`; yields (session, server pid)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env)
    with stderr_path.open("a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                with anyio.fail_after(START_TIMEOUT_S):
                    await session.initialize()
                pids = child_pids(Path(command[-1]).name if command[0] == sys.executable else Path(command[0]).name)
                yield session, (pids[-1] if pids else None)


async def stdio_calls(
    db_path: Path,
    queries: Sequence[str],
    texts: Sequence[str],
    namespace: str,
    stderr_path: Path,
    limit: int = 10,
    server_args: Sequence[str] = (),
) -> StdioFigures:
    """Recalls (after two warm-ups that load the model) then remembers, one call at a time,
    through the real client (after a curated warm-up burst, unless the server runs no worker)."""
    worker = "--no-worker" not in server_args
    figures = StdioFigures()
    async with stdio_session([str(MEMWAL), *server_args], server_env(db_path), stderr_path) as (session, pid):
        if queries:
            for warm in ("warm-up: load the embedding model", "second warm-up query"):
                await _call(session, "memwal_recall", {"query": warm, "limit": limit})
        for query in queries:
            started = time.perf_counter()
            await _call(session, "memwal_recall", {"query": query, "limit": limit})
            figures.recall_ms.append((time.perf_counter() - started) * 1000)
        if texts and worker:
            # Untimed: a burst the worker curates, so the server's low-priority model copies
            # are loaded (once per process) before the timed remembers run beside curation.
            # New text each run: a repeat is an occurrence, which needs no embedding.
            run = time.time_ns()
            for index in range(WARM_REMEMBERS):
                await _call(
                    session,
                    "memwal_remember",
                    {
                        "text": f"warm-up fact {index} of run {run}",
                        "namespace": namespace,
                        **({"wait_ms": 30000} if index == WARM_REMEMBERS - 1 else {}),
                    },
                )
        loop_started = time.time()
        for text in texts:
            started = time.perf_counter()
            await _call(session, "memwal_remember", {"text": text, "namespace": namespace})
            figures.remember_ms.append((time.perf_counter() - started) * 1000)
        if texts:
            figures.remembers_curated = _curated(db_path, namespace, loop_started)
        if pid is not None:
            figures.peak_rss = vm_hwm(pid)
    return figures


WARM_REMEMBERS = 16


def _curated(db_path: Path, namespace: str, since: float) -> int:
    """Jobs of the namespace the worker has finished: whether remember latency was measured
    beside real curation (the worker waits for a short pause in tool calls, see
    memwal_mcp/curation/worker.py), or beside an idle worker."""
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(
            "SELECT COUNT(*) FROM remember_jobs WHERE namespace = ? AND status = 'done' AND created_at >= ?",
            (namespace, since),
        ).fetchone()[0]
    finally:
        conn.close()


async def stdio_ping(workdir: Path, calls: int) -> list[float]:
    """The floor of a tool call over stdio: `ping` on the one-tool SDK server, through the same client."""
    script = workdir / "minimal_mcp_server.py"
    script.write_text(MINIMAL_SERVER, encoding="utf-8")
    ms: list[float] = []
    command = [sys.executable, str(script)]
    async with stdio_session(command, server_env(None), workdir / "ping.stderr.log") as (session, _):
        await _call(session, "ping", {})
        for _ in range(calls):
            started = time.perf_counter()
            await _call(session, "ping", {})
            ms.append((time.perf_counter() - started) * 1000)
    return ms


async def _call(session: Any, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{tool} failed over stdio: {text[:300]}")
    return result
