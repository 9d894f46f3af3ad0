"""Dashboard page loads at 10k (and 100k) memories: how long each page takes the server to answer.

    python -m benchmarks.dashboard                              # 10k memories in a temp database
    python -m benchmarks.dashboard --sizes 10000,100000 --dir /tmp/dash   # a database per size, filled once, reused

The facts are the speed benchmark's (speed_data), queued through the store's insert_job and
curated by the worker's own write path in bulk (speed_fill, `--fill direct`). The pages are
requested in process through the dashboard's ASGI app, as a browser signed in as the owner would
request them (no tokens: the configured owner), so a figure is the server's whole answer (service
call, template, response) without the network or the browser's painting. Each page is loaded
`--rounds` times after one warm-up (the first search loads the model and the lane's vectors).
Figures to stdout, a table per size; the target is 200 ms a page (at 10k). Activity is the page
that grows with the journal (its figures count every job of the owner), hence the 100k size.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from memwal_mcp.config import load_settings
from memwal_mcp.dashboard import build_dashboard
from memwal_mcp.service import MemoryService
from memwal_mcp.tokens import TokenRegistry

from . import speed_data, speed_fill

log = logging.getLogger("benchmarks.dashboard")

OWNER = "bench"
NAMESPACE = "default"
SEED = 7
TARGET_MS = 200.0


async def _fill(service: MemoryService, size: int) -> None:
    have = (await service.activity(OWNER, 1)).queue.get("done", 0)
    if have >= size:
        log.info("the database already holds %d memories' jobs", have)
        return
    embedder = await service.embedder.get()
    assert embedder is not None, "the benchmark needs the embedding model"
    for start in range(have, size, speed_fill.QUEUE_CHUNK):
        texts = list(speed_data.facts(SEED, start, min(size, start + speed_fill.QUEUE_CHUNK)))
        await service.store.write(speed_fill._queue, OWNER, NAMESPACE, texts)
    log.info("queued %d facts; curating them in bulk", size - have)
    await speed_fill._bulk(service, embedder, OWNER, NAMESPACE, size - have)


async def _time(client: httpx.AsyncClient, path: str, rounds: int) -> tuple[list[float], int]:
    response = await client.get(path)  # warm-up
    assert response.status_code == 200, (path, response.status_code, response.text[:500])
    took = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = await client.get(path)
        took.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return took, len(response.content)


async def run(folder: Path, sizes: Sequence[int], rounds: int) -> int:
    for size in sizes:
        await _run(folder / f"dashboard-{size}.db", size, rounds)
    return 0


async def _run(db: Path, size: int, rounds: int) -> None:
    settings = load_settings(db_path=db, owner=OWNER, log_level="WARNING")
    service = MemoryService(settings)
    async with service.running(worker=False):
        await _fill(service, size)
        page = await service.list(OWNER, NAMESPACE, None, 25)
        newest = page.items[0].id
        deep = page
        for _ in range(9):  # the tenth page of 25
            assert deep.next_cursor is not None
            deep = await service.list(OWNER, NAMESPACE, deep.next_cursor, 25)
        query = speed_data.queries(SEED, size, 1)[0]
        app = Starlette(
            routes=[
                Mount("/ui", app=build_dashboard(service, TokenRegistry(settings.auth, service.store), owner=OWNER))
            ]
        )
        transport = httpx.ASGITransport(app=app)
        pages = [
            ("search (10 hits)", f"/ui/search?q={quote(query)}"),
            ("search, one namespace, since", f"/ui/search?q={quote(query)}&namespace={NAMESPACE}&since=2000-01-01"),
            ("browse, first page", "/ui/memories"),
            ("browse, tenth page", f"/ui/memories?cursor={deep.next_cursor}"),
            ("a memory", f"/ui/memories/{newest}"),
            ("forget confirmation", f"/ui/memories/{newest}/forget"),
            ("activity", "/ui/activity"),
        ]
        rows = []
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            await client.get("/ui/search")  # the session cookie
            for name, path in pages:
                took, size_bytes = await _time(client, path, rounds)
                rows.append((name, statistics.median(took), max(took), size_bytes))
    print(f"dashboard page loads, {size} memories, {rounds} rounds each (server time, in process)")
    print(f"{'page':32} {'p50 ms':>8} {'max ms':>8} {'bytes':>8}")
    for name, p50, worst, size_bytes in rows:
        print(f"{name:32} {p50:8.1f} {worst:8.1f} {size_bytes:8d}")
    slow = [name for name, p50, _, _ in rows if p50 > TARGET_MS]
    print(f"target {TARGET_MS:.0f} ms a page (p50): {'met' if not slow else 'missed by ' + ', '.join(slow)}")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dashboard", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=_sizes, default=[10_000], help="memories, comma-separated (default 10000; e.g. 10000,100000)"
    )
    parser.add_argument("--rounds", type=int, default=20, help="timed loads per page (default 20)")
    parser.add_argument(
        "--dir",
        type=Path,
        help="folder of the databases (dashboard-SIZE.db), filled once and reused; default a temp one",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("memwal_mcp.curation").setLevel(logging.WARNING)  # a line per memory filled otherwise
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        return asyncio.run(run(args.dir, args.sizes, args.rounds))
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(run(Path(tmp), args.sizes, args.rounds))


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes must be whole numbers separated by commas, got {text!r}") from None
    if not sizes or sizes[0] < 250:
        raise argparse.ArgumentTypeError("--sizes: each size must be at least 250 (the tenth page of 25 is timed)")
    return sizes


if __name__ == "__main__":
    sys.exit(main())
