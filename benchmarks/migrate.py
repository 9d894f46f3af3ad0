"""How long `memwal-mcp migrate --to postgresql://...` takes, vectors copied and re-embedded.

    python -m benchmarks.migrate --size 10000                  # both modes, a throwaway PostgreSQL
    python -m benchmarks.migrate --size 10000 --mode copy --batch-size 500

A SQLite file of `size` curated memories (each with its remember job and a vector) is built
through the store contract, then moved by the real CLI as a subprocess into an empty database
of a pgserver PostgreSQL (fsync on, as shipped). `copy`: the file's vectors are labelled with
the configured (bundled) model, so they are copied. `reembed`: they are labelled with another
model, so the migration embeds every memory again with the bundled one. Each mode moves into
a database of its own; the run is timed by wall clock around the subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np

from memwal_mcp.config import BUNDLED_MODEL, load_settings
from memwal_mcp.normalize import norm_key
from memwal_mcp.store import StoreWriter, open_store
from memwal_mcp.store.records import JobRequest

from . import speed_data

DIM = 384
CHUNK = 500
OTHER_MODEL = "benchmark/other-model"
MEMWAL = Path(sys.executable).parent / "memwal-mcp"


def _fill(writer: StoreWriter, texts: Sequence[str], vectors: np.ndarray, model: str, start: float) -> None:
    filed = writer.insert_jobs("bench", [JobRequest("default", text) for text in texts], start)
    (lane,) = [lane.id for lane in writer.owner_lanes("bench") if lane.namespace == "default"]
    with writer.transaction():
        for i, (text, (job, _)) in enumerate(zip(texts, filed)):
            _, memory_id = writer.create_memory(
                owner="bench",
                namespace="default",
                lane=lane,
                body=text,
                key=norm_key(text),
                source_job_id=job.id,
                vector=vectors[i],
                model_id=model,
                now=start + i,
                created_at=start + i,
            )
            writer.mark_done(job.id, "created", memory_id, start + i)


async def build(path: Path, size: int, model: str) -> None:
    """`size` memories of distinct texts with random unit vectors labelled `model`."""
    store = open_store(load_settings(db_path=path))
    await store.open()
    try:
        await store.write(lambda w: w.ensure_vector_table(model, DIM))
        rng = np.random.default_rng(5)
        texts = list(dict.fromkeys(speed_data.facts(11, 0, size * 2)))[:size]
        start = time.time() - size
        for at in range(0, len(texts), CHUNK):
            part = texts[at : at + CHUNK]
            vectors = rng.standard_normal((len(part), DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            await store.write(_fill, part, vectors, model, start + at)
    finally:
        await store.close()


def run(path: Path, url: str, batch_size: int) -> tuple[float, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    started = time.perf_counter()
    done = subprocess.run(
        [str(MEMWAL), "migrate", "--db", str(path), "--to", url, "--batch-size", str(batch_size), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"migrate failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.migrate", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--mode", choices=["copy", "reembed", "both"], default="both")
    parser.add_argument("--batch-size", type=int, default=2000)
    args = parser.parse_args(argv)
    import pgserver
    import psycopg

    modes = ["copy", "reembed"] if args.mode == "both" else [args.mode]
    results = []
    with tempfile.TemporaryDirectory(prefix="memwal-migrate-bench-") as folder_name:
        folder = Path(folder_name)
        server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
        try:
            for mode in modes:
                source = folder / f"{mode}.db"
                started = time.perf_counter()
                anyio.run(build, source, args.size, BUNDLED_MODEL if mode == "copy" else OTHER_MODEL)
                build_s = time.perf_counter() - started
                with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE bench_{mode}")
                url = server.get_uri().replace("/postgres?", f"/bench_{mode}?")
                seconds, report = run(source, url, args.batch_size)
                records = sum(report["added"].values())
                row = {
                    "mode": mode,
                    "memories": args.size,
                    "records": records,
                    "build_s": round(build_s, 1),
                    "migrate_s": round(seconds, 1),
                    "records_per_s": round(records / seconds),
                    "vectors": report["vectors"],
                    "vector_count": report["vector_count"],
                    "verified": report["verified"],
                    "phases_s": report["seconds"],
                }
                results.append(row)
                print(json.dumps(row), flush=True)
        finally:
            server.cleanup()
    ok = all(row["verified"] for row in results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
