"""The retrieval benchmark's queries through the MCP tools (`--via stdio`).

Each query is a `memwal_recall` call through the real `mcp` client to `memwal-mcp serve
--no-worker` spawned over stdio on the benchmark's database: the path an MCP client
takes, with the tool's argument checks, its reply model and the JSON-RPC round trip in
the latency. A stdio server acts for one owner (`MEMWAL_OWNER`), so there is one
server per owner of the dataset; the worker is off because loading has finished.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .dataset import Query
from .speed_proc import MEMWAL, _call, server_env, stdio_session

# (namespace, text, score) of each hit, best first, and the call's latency in ms
Answer = tuple[list[tuple[str, str, float]], float]


async def recall_over_stdio(
    db_path: Path, mode: str, queries: Sequence[Query], limit: int, stderr_path: Path
) -> list[Answer]:
    """Every query's hits, in the order of `queries`."""
    by_owner: dict[str, list[int]] = defaultdict(list)
    for index, query in enumerate(queries):
        by_owner[query.owner].append(index)
    answers: list[Answer | None] = [None] * len(queries)
    for owner, indices in by_owner.items():
        env = {**server_env(db_path), "MEMWAL_OWNER": owner, "MEMWAL_RECALL__MODE": mode}
        async with stdio_session([str(MEMWAL), "serve", "--no-worker"], env, stderr_path) as (session, _):
            await _call(session, "memwal_recall", {"query": "warm-up query", "limit": limit})  # loads the model
            for index in indices:
                query = queries[index]
                arguments: dict[str, Any] = {"query": query.query, "limit": limit}
                if query.namespace is not None:
                    arguments["namespace"] = query.namespace
                started = time.perf_counter()
                result = await _call(session, "memwal_recall", arguments)
                latency_ms = (time.perf_counter() - started) * 1000
                answers[index] = (_hits(result), latency_ms)
    return [answer for answer in answers if answer is not None]


def _hits(result: Any) -> list[tuple[str, str, float]]:
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if not isinstance(structured, dict) or not isinstance(structured.get("hits"), list):
        raise RuntimeError("memwal_recall replied without structured hits")
    return [(hit["namespace"], hit["text"], float(hit["score"])) for hit in structured["hits"]]
