"""Counting the nominees of memories created on the no-LLM path, after they were written.

Without an LLM a proposal is created whatever kNN nominates (DESIGN.md: similarity never
decides), so the scan only feeds the `curation_nominated` and
`curation_nominee_no_llm_decision` markers. On a 1M lane that scan was most of curation's
work (1,000 jobs in-process: 121/s with it inline, 221/s without), and a memory waited for
it before anyone could recall it. So curation writes the memory at once and records it in
`deferred_nominations`; the worker counts the nominees when no job is waiting, with the
same k, threshold and scan as inline nominations. A memory's nominees are the memories
created before it (a smaller rowid), as they were when its job was curated inline.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from ..config import CurationSettings
from ..store import Store, StoreWriter, VectorMatch
from .apply import log_markers
from .nominator import nearest_each

# Hits asked of the scan beyond k: newer memories among them are not nominees.
_NEWER_SLACK = 4

Found = dict[int, list[VectorMatch]]


async def count_pass(store: Store, settings: CurationSettings) -> bool:
    """Count the nominees of up to a curation batch of deferred memories of one lane; False
    when none wait. The worker looks for due jobs between passes, so a job queued meanwhile
    waits for one pass at most. A pass is a scan of the lane, most of it fixed cost: at 1M,
    16 memories took 121 ms, 32 took 170 ms and 64 took 237 ms (the curation batch: 245/s)."""
    pending = await store.read(lambda reader: reader.deferred_nominations(settings.batch_size))
    if pending is None:
        return False
    lane, items = pending
    vectors = await store.read(lambda reader: reader.vectors_of(lane, [pk for pk, _ in items]))
    found: Found = {}
    if vectors:
        search = await store.read(lambda reader: reader.vector_search(lane))
        k = settings.nominator_k
        hits = await anyio.to_thread.run_sync(
            nearest_each, search, vectors, k * _NEWER_SLACK, settings.nominator_threshold
        )
        found = {pk: older_nominees(pk, near, k) for pk, near in hits.items()}
    await store.write(record_counts, items, found)
    return True


def older_nominees(rowid: int, near: Sequence[VectorMatch], k: int) -> list[VectorMatch]:
    """The k best hits created before this memory (itself and later ones excluded)."""
    return [match for match in near if match.pk < rowid][:k]


def record_counts(writer: StoreWriter, items: Sequence[tuple[int, str]], found: Found) -> None:
    """Bump the markers of the memories still deferred (another process may have counted some)
    and take them off the list, in one transaction; log them after the commit."""
    logged: list[tuple[list[str], str, str, str]] = []
    with writer.transaction():
        taken = writer.take_deferred_nominations([rowid for rowid, _ in items])
        live = writer.memories_by_pk([rowid for rowid, _ in items if found.get(rowid)])
        for rowid, job_id in items:
            nominees = found.get(rowid)
            if rowid not in taken or not nominees or rowid not in live:
                continue
            markers = ["curation_nominated", "curation_nominee_no_llm_decision"]
            writer.bump_counters(markers)
            why = f"{len(nominees)} nominee(s), top cosine {nominees[0][1]:.3f}; no LLM configured (counted after)"
            logged.append((markers, job_id, live[rowid].id, why))
    for entry in logged:
        log_markers(*entry)
