"""A big lane's vector search against the exact float32 scan: speed, overlap, memory, restart.

    .venv/bin/python -m benchmarks.quantized --memories 1000000 --workdir /work/q1m --cold --stdio

One run prints, for one lane of `--memories` memories: the exact float32 NumPy scan p50 (the
lane's rows, one thread, and split over the cores as recall did before heads), the recall
path's vector search p50 (heads scan + exact rescoring), their ratio, overlap@10 with the
exact top 10, RSS after the lane is loaded and at peak (anonymous and file-backed pages
apart), and the first search after a restart with and without the lane's sidecar file.
Query embedding is excluded on both sides: the queries are embedded once, up front.

`--cold` also restarts once with the page cache emptied first (`echo 3 >
/proc/sys/vm/drop_caches`, or where that is refused `posix_fadvise(POSIX_FADV_DONTNEED)` on
the database and the lane file; the run says which, and how much of the lane file was still
in the page cache). `--stdio` also starts `memwal-mcp` over stdio, with the real `mcp`
client, on the fixture database (after the restarts, so the lane file exists): start to
`initialize`, the first recall (time, RSS), `--recalls` more (p50) and the server's peak RSS
(VmHWM); with `--cold`, once warm and once after emptying the cache.

The vectors are synthetic but shaped like real ones: `--bases` real MiniLM embeddings of the
speed benchmark's facts, each memory a weighted mix of two of them plus a little noise
(random Gaussian vectors have no neighbourhoods, which makes any first stage look wrong).
The queries are real embeddings of held-out facts. The fixture database is built once
through the store's own writer (create_memory) and reused.

Each measurement runs in a child process of its own, so a peak RSS is one process's.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import mmap
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

OWNER, NAMESPACE = "bench", "default"
QUERIES = 200
K = 10
# Fixture memories are created a millisecond apart, as a lane filled over time: the recall's
# context neighbours (created just before and after a hit) are found by created_at, and a
# million memories with one timestamp would make each of those seeks a scan of the lane.
CREATED_STEP_S = 1e-3


def _rss() -> dict[str, float]:
    """VmRSS, its anonymous and file-backed parts, and the peak VmHWM, in MiB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[name] = int(value.split()[0]) / 1024
    return out


def _embed(workdir: Path, bases: int) -> tuple[np.ndarray, np.ndarray]:
    cached = workdir / f"bases-{bases}.npz"
    if cached.exists():
        data = np.load(cached)
        return data["bases"], data["queries"]
    from memwal_mcp.config import load_settings
    from memwal_mcp.embedding import FastEmbedEmbedder

    from . import speed_data

    embedder = FastEmbedEmbedder(load_settings().embedding)
    try:
        base = np.asarray(embedder.embed_documents(list(speed_data.facts(7, 0, bases))), dtype=np.float32)
        queries = np.asarray([embedder.embed_query(q) for q in speed_data.queries(7, bases, QUERIES)], dtype=np.float32)
    finally:
        embedder.close()
    np.savez(cached, bases=base, queries=queries)
    return base, queries


def synthetic(base: np.ndarray, n: int, seed: int = 1) -> np.ndarray:
    """n unit vectors, each a weighted mix of two real embeddings plus noise (sigma 0.03 a coordinate)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), np.float32)
    for lo in range(0, n, 65536):
        m = min(65536, n - lo)
        pick = rng.integers(0, len(base), (m, 2))
        weight = rng.uniform(0.2, 1.0, (m, 1)).astype(np.float32)
        mixed = base[pick[:, 0]] * weight + base[pick[:, 1]] * (1 - weight) * 0.6
        mixed += np.asarray(rng.standard_normal(mixed.shape), dtype=np.float32) * 0.03
        out[lo : lo + m] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return out


async def _build(db: Path, vectors: np.ndarray, model_id: str) -> None:
    from memwal_mcp.config import load_settings
    from memwal_mcp.store import open_store

    store = open_store(load_settings(db_path=db))
    await store.open()
    try:
        now = time.time()
        job = await store.write(lambda w: w.insert_job(OWNER, NAMESPACE, "fixture", None, now))
        await store.write(lambda w: w.ensure_vector_table(model_id, vectors.shape[1]))
        lane = next(x.id for x in await store.read(lambda r: r.owner_lanes(OWNER)) if x.namespace == NAMESPACE)
        job_id = job[0].id if isinstance(job, tuple) else job.id

        def chunk(writer: Any, lo: int, hi: int) -> None:
            with writer.transaction():
                for i in range(lo, hi):
                    body = f"synthetic memory {i}"
                    pk, memory_id = writer.create_memory(
                        owner=OWNER, namespace=NAMESPACE, lane=lane, body=body, key=body,
                        source_job_id=job_id, vector=vectors[i], model_id=model_id, now=now,
                        created_at=now - (len(vectors) - i) * CREATED_STEP_S,
                    )  # fmt: skip
                    if i == 0:  # the job is done: a server started on the fixture has nothing to curate
                        writer.mark_done(job_id, "created", memory_id, now)

        started = time.perf_counter()
        for lo in range(0, len(vectors), 20_000):
            await store.write(chunk, lo, min(len(vectors), lo + 20_000))
            print(
                f"  fixture: {min(len(vectors), lo + 20_000):,} / {len(vectors):,} ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    finally:
        await store.close()


def _fixture(workdir: Path, n: int, bases: int) -> tuple[Path, np.ndarray]:
    base, queries = _embed(workdir, bases)
    db = workdir / f"quantized-{n}.db"
    done = workdir / f"quantized-{n}.done"
    if not done.exists():
        for stale in workdir.glob(f"quantized-{n}.db*"):
            stale.unlink()
        from memwal_mcp.config import load_settings

        asyncio.run(_build(db, synthetic(base, n), load_settings().embedding.model))
        done.write_text("ok")
    return db, queries


def _evict(db: Path, method: str) -> str:
    """Empty the page cache of the database and its lane files before a restart; what did it."""
    if method == "drop":
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
            return "sync; echo 3 > /proc/sys/vm/drop_caches"
        except OSError as exc:
            print(f"  drop_caches refused ({exc}); falling back to posix_fadvise", flush=True)
    for path in _files(db):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return "posix_fadvise(POSIX_FADV_DONTNEED) on the database and its lane file"


def _files(db: Path) -> list[Path]:
    return [
        p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), *db.parent.glob(f"{db.name}.lane-*.vec")) if p.exists()
    ]


def _resident(path: Path) -> float:
    """The share of the file's pages in the page cache (mincore), 0..1."""
    size = path.stat().st_size
    if not size:
        return 0.0
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as m:
        pages = -(-size // mmap.PAGESIZE)
        vec = (ctypes.c_ubyte * pages)()
        address = ctypes.addressof(ctypes.c_char.from_buffer(m))
        if libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vec) != 0:
            return float("nan")
        return sum(b & 1 for b in vec) / pages


def _cache_state(db: Path) -> str:
    return ", ".join(
        f"{p.name.split('.lane-')[-1] if '.lane-' in p.name else p.name} {_resident(p):.0%}" for p in _files(db)
    )


def _lane_search(db: Path):  # -> (conn, VectorSearch factory)
    from memwal_mcp.store.sqlite import vectors
    from memwal_mcp.store.sqlite.connection import connect

    conn = connect(db)
    (lane,) = conn.execute("SELECT id FROM lanes").fetchone()
    return conn, lambda: vectors.vector_search(conn, lane)


def _exact_top(lane: Any, query: np.ndarray) -> np.ndarray:
    """The exact float32 NumPy scan of the lane's rows, one thread: row indices of the top K."""
    rotated = lane._in_basis(query)
    scores = np.concatenate([block @ rotated for block in lane._used_blocks()])
    return np.argpartition(-scores, K - 1)[:K]


def child(mode: str, db: Path, queries_file: Path, out: Path, heads_rows: int | None) -> None:
    """One measurement in this process: `before` (the lane loaded as before heads: floats in
    memory, exact scans), or `after` (heads and the sidecar file)."""
    from memwal_mcp.store.sqlite import connection, matrix, matrix_sync, vectors

    del connection, vectors  # imported before the clock starts, as a server has them before its first recall
    queries = np.load(queries_file)
    result: dict[str, Any] = {"rss_start": _rss()}
    if mode == "before":
        matrix_sync.HEADS_ROWS = 1 << 62
    elif heads_rows is not None:
        matrix_sync.HEADS_ROWS = heads_rows
    started = time.perf_counter()
    conn, search = _lane_search(db)
    lane_search = search()
    first = lane_search(queries[:1], K)
    result["first_search_s"] = time.perf_counter() - started
    result["rss_loaded"] = _rss()
    lane = lane_search._matrix  # type: ignore[attr-defined]
    if mode == "before":
        top: list[list[int]] = []
        plain, split = [], []
        for q in queries:
            t = time.perf_counter()
            best = _exact_top(lane, q)
            plain.append(time.perf_counter() - t)
            top.append(sorted(int(lane.rowids[i]) for i in best))
            t = time.perf_counter()
            lane_search(q[None], K)
            split.append(time.perf_counter() - t)
        result["exact_plain_p50_ms"] = statistics.median(plain) * 1e3
        result["exact_split_p50_ms"] = statistics.median(split) * 1e3
        result["top"] = top
    else:
        times, top = [], []
        for q in queries:
            t = time.perf_counter()
            hits = lane_search(q[None], K)[0]
            times.append(time.perf_counter() - t)
            top.append(sorted(pk for pk, _ in hits))
        result["search_p50_ms"] = statistics.median(times) * 1e3
        result["top"] = top
        result["heads"] = lane.heads is not None
        result["rescore_rows"] = matrix.RESCORE_ROWS
    del first
    result["rss_end"] = _rss()
    if mode == "after":  # then, interleaved query by query, against the exact scan of the same rows
        exact, searched = [], []
        _exact_top(lane, queries[0])  # faults the mapped rows in (RSS is no longer the recall's from here)
        for q in queries:
            t = time.perf_counter()
            _exact_top(lane, q)
            exact.append(time.perf_counter() - t)
            t = time.perf_counter()
            lane_search(q[None], K)
            searched.append(time.perf_counter() - t)
        result["interleaved_exact_p50_ms"] = statistics.median(exact) * 1e3
        result["interleaved_search_p50_ms"] = statistics.median(searched) * 1e3
    conn.close()
    out.write_text(json.dumps(result))


async def _stdio(db: Path, queries: list[str], recalls: int, log_path: Path) -> dict[str, Any]:
    """memwal-mcp over stdio on the fixture: its start, first recall, recall p50, and RSS."""
    from . import footprint, speed_proc

    env = speed_proc.server_env(db)
    env["MEMWAL_OWNER"] = OWNER
    out: dict[str, Any] = {}
    started = time.perf_counter()
    async with speed_proc.stdio_session([str(speed_proc.MEMWAL)], env, log_path) as (session, pid):
        if pid is None:
            raise RuntimeError("cannot find the memwal-mcp server's process")
        out["initialize_s"] = time.perf_counter() - started
        out["rss_started"] = footprint._status(pid, "VmRSS")
        found = 0

        async def recall(query: str) -> float:
            nonlocal found
            begun = time.perf_counter()
            result = await speed_proc._call(session, "memwal_recall", {"query": query, "limit": K})
            took = time.perf_counter() - begun
            found += "synthetic memory" in " ".join(getattr(block, "text", "") for block in result.content)
            return took

        out["first_recall_s"] = await recall(queries[0])
        out["rss_first_recall"] = footprint._status(pid, "VmRSS")
        out["hwm_first_recall"] = footprint._status(pid, "VmHWM")
        times = [await recall(q) for q in (queries[1:] * (1 + recalls // max(1, len(queries) - 1)))[:recalls]]
        out["recall_p50_ms"] = statistics.median(times) * 1e3
        out["rss_end"] = footprint._status(pid, "VmRSS")
        out["peak_rss"] = footprint._status(pid, "VmHWM")
        out["recalls"] = len(times) + 1
        out["answered_from_lane"] = found
    return out


def _stdio_queries(bases: int) -> list[str]:
    from . import speed_data

    return speed_data.queries(7, bases, QUERIES)


def _run_child(mode: str, db: Path, queries_file: Path, workdir: Path, heads_rows: int | None) -> dict[str, Any]:
    out = workdir / f"{db.stem}-{mode}.json"
    extra = [] if heads_rows is None else ["--heads-rows", str(heads_rows)]
    subprocess.run(
        [sys.executable, "-m", "benchmarks.quantized", "--child", mode, "--db", str(db), "--queries-file",
         str(queries_file), "--out", str(out), *extra],
        check=True,
    )  # fmt: skip
    return json.loads(out.read_text())


def measure(
    n: int,
    workdir: Path,
    bases: int,
    heads_rows: int | None = None,
    cold: str | None = None,
    stdio: bool = False,
    recalls: int = 100,
) -> dict[str, Any]:
    db, queries = _fixture(workdir, n, bases)
    queries_file = workdir / f"queries-{n}.npy"
    np.save(queries_file, queries)
    for old in workdir.glob(f"quantized-{n}.db.lane-*.vec"):
        old.unlink()
    before = _run_child("before", db, queries_file, workdir, None)
    build = _run_child("after", db, queries_file, workdir, heads_rows)  # no sidecar yet: loads, writes it
    after = _run_child("after", db, queries_file, workdir, heads_rows)  # a restart: maps it
    stdio_runs: dict[str, dict[str, Any]] = {}
    texts = _stdio_queries(bases) if stdio else []
    if stdio:  # the lane file is in the page cache: `after` read every row
        stdio_runs["warm"] = asyncio.run(_stdio(db, texts, recalls, workdir / "stdio.log"))
    cold_after: dict[str, Any] | None = None
    evicted = cached = ""
    if cold:
        evicted = _evict(db, cold)
        cached = _cache_state(db)
        cold_after = _run_child("after", db, queries_file, workdir, heads_rows)
        if stdio:
            _evict(db, cold)
            stdio_runs["cold"] = asyncio.run(_stdio(db, texts, recalls, workdir / "stdio.log"))
    overlap = [len(set(a) & set(b)) / K for a, b in zip(after["top"], before["top"])]
    sidecar = next(workdir.glob(f"quantized-{n}.db.lane-*.vec"), None)
    return {
        "memories": n,
        "exact_plain_p50_ms": before["exact_plain_p50_ms"],
        "exact_split_p50_ms": before["exact_split_p50_ms"],
        "search_p50_ms": after["search_p50_ms"],
        "ratio_plain": after["search_p50_ms"] / before["exact_plain_p50_ms"],
        "ratio_split": after["search_p50_ms"] / before["exact_split_p50_ms"],
        "interleaved_exact_p50_ms": after["interleaved_exact_p50_ms"],
        "interleaved_search_p50_ms": after["interleaved_search_p50_ms"],
        "ratio_interleaved": after["interleaved_search_p50_ms"] / after["interleaved_exact_p50_ms"],
        "overlap_at_10": statistics.mean(overlap),
        "overlap_min": min(overlap),
        "heads": after["heads"],
        "rescore_rows": after["rescore_rows"],
        "before": {k: before[k] for k in ("first_search_s", "rss_loaded", "rss_end")},
        "first_build": {k: build[k] for k in ("first_search_s", "rss_loaded", "rss_end")},
        "after": {k: after[k] for k in ("first_search_s", "rss_loaded", "rss_end")},
        "sidecar_mib": sidecar.stat().st_size / 2**20 if sidecar else 0.0,
        "cold": None
        if cold_after is None
        else {
            "method": evicted,
            "resident_after_eviction": cached,
            **{k: cold_after[k] for k in ("first_search_s", "rss_loaded", "rss_end")},
        },
        "stdio": stdio_runs,
    }


def format_result(r: dict[str, Any]) -> str:
    def rss(d: dict[str, float]) -> str:
        return f"{d['VmRSS']:.0f} MiB (anon {d['RssAnon']:.0f}, file {d['RssFile']:.0f})"

    lines = [
        f"## {r['memories']:,} memories, one lane, 384-d, k={K}, {QUERIES} real queries (embedding excluded)",
        f"exact float32 NumPy scan p50, one thread   {r['exact_plain_p50_ms']:8.1f} ms",
        f"exact scan split over cores (before) p50   {r['exact_split_p50_ms']:8.1f} ms",
        f"recall-path vector search p50              {r['search_p50_ms']:8.1f} ms"
        f"  (heads: {r['heads']}, rescoring {r['rescore_rows']} rows)",
        f"ratio to the one-thread scan               {r['ratio_plain']:8.2f}x",
        f"ratio to the split scan                    {r['ratio_split']:8.2f}x",
        f"interleaved in one process: exact scan / recall-path search p50  {r['interleaved_exact_p50_ms']:.1f} / "
        f"{r['interleaved_search_p50_ms']:.1f} ms = {r['ratio_interleaved']:.2f}x",
        f"overlap@10 with the exact top 10           {r['overlap_at_10']:8.3f}  (lowest query {r['overlap_min']:.1f})",
        f"first search, before (load + rotate)       {r['before']['first_search_s']:8.2f} s",
        f"first search, first run (load + write file){r['first_build']['first_search_s']:8.2f} s",
        f"first search after restart (map the file)  {r['after']['first_search_s']:8.2f} s",
        f"RSS after load, before                     {rss(r['before']['rss_loaded'])}",
        f"RSS after load, after                      {rss(r['after']['rss_loaded'])}",
        f"RSS after {QUERIES} searches, after              {rss(r['after']['rss_end'])}",
        "  (peaks below are VmHWM before the interleaved part, which maps the exact scan's rows in)",
        f"peak RSS (VmHWM): before {r['before']['rss_end']['VmHWM']:.0f} MiB, first run "
        f"{r['first_build']['rss_end']['VmHWM']:.0f} MiB, after restart {r['after']['rss_end']['VmHWM']:.0f} MiB",
        f"sidecar file                               {r['sidecar_mib']:8.0f} MiB",
    ]
    if r.get("cold"):
        c = r["cold"]
        lines += [
            f"first search after restart, cold cache     {c['first_search_s']:8.2f} s"
            f"  (peak {c['rss_end']['VmHWM']:.0f} MiB)",
            f"  emptied by: {c['method']}; then in the page cache: {c['resident_after_eviction']}",
        ]
    for name, run in r.get("stdio", {}).items():
        mib = 2**20
        lines += [
            f"memwal-mcp over stdio ({name} cache): initialize {run['initialize_s']:.2f} s, first recall "
            f"{run['first_recall_s']:.2f} s (RSS then {run['rss_first_recall'] / mib:.0f} MiB, "
            f"peak {run['hwm_first_recall'] / mib:.0f} MiB)",
            f"  {run['recalls'] - 1} more recalls p50 {run['recall_p50_ms']:.1f} ms; RSS {run['rss_end'] / mib:.0f} MiB; "
            f"peak RSS (VmHWM) {run['peak_rss'] / mib:.0f} MiB (bar 1,024); "
            f"{run['answered_from_lane']} / {run['recalls']} answered from the lane",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--workdir", type=Path, default=Path("benchmarks/.quantized"))
    parser.add_argument("--bases", type=int, default=4000)
    parser.add_argument("--child", choices=["before", "after"])
    parser.add_argument("--db", type=Path)
    parser.add_argument("--queries-file", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--heads-rows", type=int, help="lanes from this size keep heads (matrix_sync.HEADS_ROWS)")
    parser.add_argument(
        "--cold",
        nargs="?",
        const="drop",
        choices=["drop", "fadvise"],
        help="also restart with the page cache emptied: drop_caches (falls back to fadvise), or fadvise only",
    )
    parser.add_argument("--stdio", action="store_true", help="also measure memwal-mcp over stdio on the fixture")
    parser.add_argument("--recalls", type=int, default=100, help="recalls over stdio after the first")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.db, args.queries_file, args.out, args.heads_rows)
        return
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = [
        measure(n, args.workdir, args.bases, args.heads_rows, args.cold, args.stdio, args.recalls)
        for n in args.memories
    ]
    (args.workdir / "quantized.json").write_text(json.dumps(results, indent=2))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for r in results:
        print(format_result(r))


if __name__ == "__main__":
    main()
