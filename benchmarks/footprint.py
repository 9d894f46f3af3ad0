"""Footprint of the stdio server, and idle recall against its floor, side by side with a peer.

    python -m benchmarks.footprint [--facts 2000] [--recalls 200] [--peer-python PATH | --install-peer DIR]

In one run, for `memwal-mcp serve` over stdio (the real `mcp` client, the default model):
resident memory (VmRSS) idle after start, after the first recall, at the peak (VmHWM) of a
burst of distinct facts remembered and then recalled, and once that burst has settled. Then
the idle recall at that size, decomposed: the SDK's own round trip (`ping` on a one-tool SDK
server), the query embedding, the vector scan, the word search, the rest of the search
(candidates, fusion, collapse, copies), the reply's formatting, and what remains (the tool
layer and the thread hops); and the acceptance figure `recall p50 - (ping p50 + embed p50)`
against its 1.5 ms allowance. Timings are printed, never asserted.

The peer, `mcp-memory-service-lite` 12.4.0, runs the same burst through its own stdio server
with the same int8 all-MiniLM-L6-v2 file (placed where it looks for its model, in a scratch
home, so it downloads nothing). It needs its own virtualenv: `--install-peer DIR` makes one
with pip, `--peer-python` points at one already made. Without either, the peer columns are
skipped with a message.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio

from . import speed_data, speed_proc

MIB = 2**20
PEER = "mcp-memory-service-lite==12.4.0"
# This Python cannot load SQLite extensions; the peer's sqlite-vec then gets the same fallback
# as memwal's store (sqlean, SQLite built with extension loading), put in place of sqlite3.
PEER_SQLITE = "sqlean.py==3.50.4.5"
PEER_LAUNCH = """\
import runpy, sqlite3, sys
probe = sqlite3.connect(":memory:")
if not hasattr(probe, "enable_load_extension"):
    import sqlean, sqlean.dbapi2
    sys.modules["sqlite3"], sys.modules["sqlite3.dbapi2"] = sqlean, sqlean.dbapi2
probe.close()
sys.argv = ["mcp_memory_service.server"]
runpy.run_module("mcp_memory_service.server", run_name="__main__", alter_sys=True)
"""
SEED = 20
NAMESPACE = "default"
LIMIT = 5
SETTLE_MAX_S = 20.0  # longest wait for a server to go quiet before its RSS is read
ALLOWANCE_MS = 1.5  # recall p50 may exceed ping p50 + embedding p50 by this much


# --- /proc ----------------------------------------------------------------------------


def _status(pid: int, key: str) -> int | None:
    """A field of /proc/PID/status in bytes (VmRSS, VmHWM)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0


async def settled_rss(pid: int) -> int | None:
    """VmRSS once the process has used no CPU for half a second (a model loading in the
    background, or curation finishing, would otherwise be caught half-way)."""
    deadline = time.monotonic() + SETTLE_MAX_S
    ticks = _cpu_ticks(pid)
    while time.monotonic() < deadline:
        await anyio.sleep(0.5)
        now = _cpu_ticks(pid)
        if now == ticks:
            break
        ticks = now
    return _status(pid, "VmRSS")


def p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


# --- one server's footprint -----------------------------------------------------------


@dataclass
class Footprint:
    name: str
    idle_rss: int | None = None
    first_recall_rss: int | None = None
    peak_rss: int | None = None
    settled_rss: int | None = None
    remember_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)
    burst_s: float = 0.0  # the burst, from the first remember until every fact is searchable
    refused: int = 0  # tool calls answered with an error (counted for the peer only)


@dataclass
class Server:
    """How to start one server and speak to it."""

    name: str
    command: list[str]
    env: dict[str, str]
    remember: Callable[[str], tuple[str, dict[str, Any]]]
    recall: Callable[[str], tuple[str, dict[str, Any]]]
    drained: Callable[[], Awaitable[None]]  # returns once every remembered fact is searchable
    refusals_ok: bool = False  # a tool error is counted, not fatal (the peer refuses near-duplicates)


PRIMING = 10  # facts stored by an earlier session, so the measured one starts on a store in use


async def prime(server: Server, log_path: Path) -> None:
    """A first session that stores a few facts and stops: the measured session then starts as a
    server does on a user's machine, on a database that holds memories (its first recall
    embeds a query and searches them)."""
    async with speed_proc.stdio_session(server.command, server.env, log_path) as (session, _):
        for index in range(PRIMING):
            await _call(
                server, None, session, server.remember(f"priming fact {index}: the user likes tea number {index}")
            )
        await server.drained()


async def _call(server: Server, out: Footprint | None, session: Any, call: tuple[str, dict[str, Any]]) -> None:
    if not server.refusals_ok:
        await speed_proc._call(session, *call)
        return
    result = await session.call_tool(*call)
    if (getattr(result, "is_error", False) or getattr(result, "isError", False)) and out is not None:
        out.refused += 1


async def measure(server: Server, facts: Sequence[str], queries: Sequence[str], log_path: Path) -> Footprint:
    await prime(server, log_path)
    out = Footprint(server.name)
    async with speed_proc.stdio_session(server.command, server.env, log_path) as (session, pid):
        if pid is None:
            raise RuntimeError(f"cannot find the {server.name} server's process")
        await session.list_tools()
        out.idle_rss = await settled_rss(pid)
        await _call(server, out, session, server.recall("what does the user prefer to drink"))
        out.first_recall_rss = await settled_rss(pid)
        started = time.perf_counter()
        for text in facts:
            begun = time.perf_counter()
            await _call(server, out, session, server.remember(text))
            out.remember_ms.append((time.perf_counter() - begun) * 1000)
        await server.drained()
        out.burst_s = time.perf_counter() - started
        await _call(server, out, session, server.recall(queries[0]))  # untimed
        for query in queries[1:]:
            begun = time.perf_counter()
            await _call(server, out, session, server.recall(query))
            out.recall_ms.append((time.perf_counter() - begun) * 1000)
        out.peak_rss = _status(pid, "VmHWM")
        out.settled_rss = await settled_rss(pid)
    return out


def _queued(db_path: Path, sql: str) -> int:
    conn = sqlite3.connect(db_path, timeout=30)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def memwal_server(db_path: Path) -> Server:
    async def drained() -> None:
        while _queued(db_path, "SELECT COUNT(*) FROM remember_jobs WHERE status = 'queued'"):
            await anyio.sleep(0.1)

    return Server(
        "memwal-mcp",
        [str(speed_proc.MEMWAL)],
        speed_proc.server_env(db_path),
        lambda text: ("memwal_remember", {"text": text, "namespace": NAMESPACE}),
        lambda query: ("memwal_recall", {"query": query, "limit": LIMIT}),
        drained,
    )


# --- the peer -------------------------------------------------------------------------


def install_peer(folder: Path) -> Path:
    """A virtualenv with the peer in it (made once; an existing one is reused)."""
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    done = subprocess.run(
        [str(python), "-m", "pip", "show", "-q", "mcp-memory-service-lite", "sqlean.py"], capture_output=True
    )
    if done.returncode != 0:
        print(f"installing {PEER} into {folder} ...", file=sys.stderr, flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER, PEER_SQLITE], check=True)
    return python


def _peer_home(home: Path) -> None:
    """The bundled model where the peer looks for its default all-MiniLM-L6-v2, so it loads the
    same int8 weights and tokenizer memwal uses and never downloads."""
    from memwal_mcp.bundled_model import source_files

    folder = home / ".cache" / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in source_files().items():
        if name != "tokenizer_config.json":
            target = folder / name
            if not target.exists():
                target.symlink_to(source)


def peer_server(python: Path, workdir: Path) -> Server:
    home = workdir / "peer-home"
    _peer_home(home)
    db_path = workdir / "peer.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMWAL_", "MCP_"))}
    env.update(
        HOME=str(home),
        PYTHONUNBUFFERED="1",
        MCP_MEMORY_STORAGE_BACKEND="sqlite_vec",
        MCP_MEMORY_SQLITE_PATH=str(db_path),
        MCP_MEMORY_BASE_DIR=str(workdir / "peer-base"),
        MCP_MEMORY_ONNX_ALLOW_DOWNLOAD="0",
        MCP_MEMORY_USE_ONNX="true",
        HF_HUB_OFFLINE="1",
    )

    async def drained() -> None:  # the peer stores (and embeds) inside the call
        return None

    return Server(
        PEER,
        [str(python), "-c", PEER_LAUNCH],
        env,
        lambda text: ("memory_store", {"content": text}),
        lambda query: ("memory_search", {"query": query, "limit": LIMIT}),
        drained,
        refusals_ok=True,
    )


# --- the idle recall, decomposed ------------------------------------------------------


@dataclass
class Decomposition:
    ping_ms: list[float] = field(default_factory=list)
    embed_ms: list[float] = field(default_factory=list)
    scan_ms: list[float] = field(default_factory=list)
    words_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)  # the whole search, query vector cached
    format_ms: list[float] = field(default_factory=list)
    in_process_ms: list[float] = field(default_factory=list)  # MemoryService.recall, nothing cached


async def decompose(db_path: Path, queries: Sequence[str], workdir: Path) -> Decomposition:
    """Each stage of a recall timed alone, in this process, on the server's database (the
    server has stopped: nothing else runs). The query vectors are computed first, so the
    scan and the search after them are timed without the embedding."""
    from memwal_mcp.config import load_settings
    from memwal_mcp.recall.format import recall_text
    from memwal_mcp.recall.lexical import content_terms
    from memwal_mcp.schemas import RecallOut
    from memwal_mcp.service import MemoryService

    out = Decomposition(ping_ms=await speed_proc.stdio_ping(workdir, len(queries)))
    settings = load_settings(db_path=db_path, llm={"base_url": None})
    service = MemoryService(settings)
    async with service.running(worker=False):
        embedder = await service.embedder.get()
        assert embedder is not None
        store = service.store
        lanes = [lane.id for lane in await store.read(lambda r: r.owner_lanes(settings.owner))]
        k = max(LIMIT * 4, 100)
        embedder.embed_query("warm-up")
        for query in queries:
            begun = time.perf_counter()
            vector = embedder.embed_query(query)
            out.embed_ms.append((time.perf_counter() - begun) * 1000)
            searches = await store.read(lambda r: [r.vector_search(lane) for lane in lanes])
            begun = time.perf_counter()
            for search_lane in searches:
                search_lane(vector[None], k)
            out.scan_ms.append((time.perf_counter() - begun) * 1000)
            terms = content_terms(query)

            def words(reader: Any, terms: list[str] = terms) -> float:
                begun = time.perf_counter()
                reader.text_search(lanes, terms, k)
                return (time.perf_counter() - begun) * 1000

            out.words_ms.append(await store.read(words))
            begun = time.perf_counter()
            result = await service.recall(settings.owner, query, LIMIT, NAMESPACE)
            out.search_ms.append((time.perf_counter() - begun) * 1000)
            begun = time.perf_counter()
            recall_text(result)
            RecallOut.of(result).model_dump()
            out.format_ms.append((time.perf_counter() - begun) * 1000)
        cache = getattr(embedder, "_query_cache", None)
        if cache is not None:
            cache.clear()
        for query in queries:
            begun = time.perf_counter()
            await service.recall(settings.owner, query, LIMIT, NAMESPACE)
            out.in_process_ms.append((time.perf_counter() - begun) * 1000)
    return out


# --- report ---------------------------------------------------------------------------


def _mib(value: int | None) -> str:
    return f"{value / MIB:.0f} MiB" if value else "n/a"


def _ms(value: float | None) -> str:
    return f"{value:.2f} ms" if value is not None else "n/a"


def report(ours: Footprint, peer: Footprint | None, peer_note: str | None, parts: Decomposition, facts: int) -> str:
    lines = [f"footprint over stdio, {facts:,} distinct facts remembered then recalled (limit {LIMIT})", ""]
    header = f"{'figure':<44} {'memwal-mcp':>12}"
    if peer is not None:
        header += f" {'peer':>12} {'memwal/peer':>12}"
    lines.append(header)
    rows: list[tuple[str, Any, Any, str]] = [
        ("RSS idle after start", ours.idle_rss, peer and peer.idle_rss, "mib"),
        ("RSS after the first recall", ours.first_recall_rss, peer and peer.first_recall_rss, "mib"),
        ("peak RSS (VmHWM), burst and recall", ours.peak_rss, peer and peer.peak_rss, "mib"),
        ("RSS once the burst has settled", ours.settled_rss, peer and peer.settled_rss, "mib"),
        ("remember p50", p50(ours.remember_ms), peer and p50(peer.remember_ms), "ms"),
        ("recall p50, queue drained", p50(ours.recall_ms), peer and p50(peer.recall_ms), "ms"),
        ("burst: remembered to searchable", ours.burst_s, peer and peer.burst_s, "s"),
    ]
    if peer is not None and peer.refused:
        lines.insert(2, f"(the peer refused {peer.refused} of the calls, e.g. as near-duplicates)")
    for label, mine, theirs, unit in rows:
        show: Callable[[Any], str] = {
            "mib": _mib,
            "ms": _ms,
            "s": lambda v: f"{v:.1f} s" if v is not None else "n/a",
        }[unit]
        line = f"{label:<44} {show(mine):>12}"
        if peer is not None:
            ratio = f"{mine / theirs:.2f}x" if mine and theirs else "n/a"
            line += f" {show(theirs):>12} {ratio:>12}"
        lines.append(line)
    if peer_note:
        lines.append(peer_note)
    ping, embed = p50(parts.ping_ms), p50(parts.embed_ms)
    stdio = p50(ours.recall_ms)
    search, scan, words = p50(parts.search_ms), p50(parts.scan_ms), p50(parts.words_ms)
    lines += ["", f"idle recall over stdio at {facts:,} memories, p50 of {len(ours.recall_ms)} distinct queries:"]
    rest_of_search = search - max(scan or 0, words or 0) if search is not None else None
    layer = stdio - (ping or 0) - (embed or 0) - (search or 0) - (p50(parts.format_ms) or 0) if stdio else None
    for label, value in (
        ("SDK round trip (ping on a one-tool SDK server)", ping),
        ("query embedding", embed),
        ("vector scan (beside the word search)", scan),
        ("word search (beside the scan)", words),
        ("candidates, fusion, collapse, copies", rest_of_search),
        ("search in-process after the embedding", search),
        ("formatting (text and structured reply)", p50(parts.format_ms)),
        ("tool layer and thread hops (the remainder)", layer),
        ("recall in-process, embedding included", p50(parts.in_process_ms)),
        ("total over stdio", stdio),
    ):
        lines.append(f"  {label:<50} {_ms(value):>10}")
    if stdio is not None and ping is not None and embed is not None:
        over = stdio - ping - embed
        verdict = "pass" if over <= ALLOWANCE_MS else "miss"
        lines.append(
            f"  acceptance: recall p50 - (ping p50 + embed p50) = {over:.2f} ms, allowance {ALLOWANCE_MS} ms: {verdict}"
        )
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=2000, help="distinct facts in the burst (default 2000)")
    parser.add_argument("--recalls", type=int, default=200, help="timed recalls after the burst (default 200)")
    peer = parser.add_mutually_exclusive_group()
    peer.add_argument("--peer-python", type=Path, help="interpreter of a virtualenv holding the peer")
    peer.add_argument("--install-peer", type=Path, metavar="DIR", help="make (or reuse) a virtualenv for the peer")
    parser.add_argument("--skip-peer", action="store_true", help="measure memwal-mcp alone")
    parser.add_argument("--json-out", type=Path, help="also write the figures as JSON there")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    facts = list(speed_data.facts(SEED, 0, args.facts))
    queries = speed_data.queries(SEED, args.facts, args.recalls + 1)
    with tempfile.TemporaryDirectory(prefix="memwal-footprint-") as scratch:
        workdir = Path(scratch)
        db_path = workdir / "memwal.db"
        ours = await measure(memwal_server(db_path), facts, queries, workdir / "memwal.stderr.log")
        parts = await decompose(db_path, queries[1:], workdir)
        peer: Footprint | None = None
        note: str | None = None
        python = args.peer_python
        if args.install_peer is not None and not args.skip_peer:
            python = install_peer(args.install_peer)
        if args.skip_peer:
            note = "peer: skipped (--skip-peer)"
        elif python is None:
            note = (
                f"peer: not measured; give --install-peer DIR (pip installs {PEER} there) "
                "or --peer-python PATH to compare"
            )
        else:
            try:
                peer = await measure(peer_server(python, workdir), facts, queries, workdir / "peer.stderr.log")
            except Exception as exc:  # the peer's failure is reported, ours still printed
                tail = (workdir / "peer.stderr.log").read_text(errors="replace")[-1500:]
                note = f"peer: failed ({type(exc).__name__}: {exc}); its stderr ends:\n{tail}"
        print(report(ours, peer, note, parts, args.facts))
        print(f"\nmachine: load average {speed_proc.loadavg()} at the end; the machine is shared: figures are noisy")
        if args.json_out is not None:
            payload = {"memwal": asdict(ours), "peer": asdict(peer) if peer else None, "recall_parts": asdict(parts)}
            args.json_out.write_text(json.dumps(payload, indent=1))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
