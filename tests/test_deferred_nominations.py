"""The no-LLM path writes a memory first and counts its nominees afterwards.

Without an LLM a proposal is created whatever kNN nominates, so curation must not make a
memory wait for the scan before it can be recalled; the markers still come out as if the
scan had run inline: a memory's nominees are the memories made before it, counted once.
Real SQLite file, the real bundled model.
"""

from __future__ import annotations

import anyio
import pytest

from memwal_mcp.curation import deferred
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import memories as memory_store
from tests.scripted_llm import Reply, ScriptedLLM

DARK, LIGHT = "User prefers dark roast coffee", "User prefers light roast coffee"  # cosine >= 0.86
DEPLOYS = "Deploys go out on Fridays"


async def _curate_queued(svc: MemoryService) -> None:
    while await svc.worker.run_once():
        pass


async def _markers(svc: MemoryService) -> dict[str, int]:
    return await svc.store.db.read(memory_store.counters)


async def test_a_memory_is_searchable_before_its_nominees_are_counted_and_counted_once(make_settings, embedder):
    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        for text in (DARK, LIGHT, DEPLOYS):
            await svc.remember("local", text)
        await _curate_queued(svc)

        hits = (await svc.recall("local", "light roast coffee")).hits
        assert hits[0].text == LIGHT  # written and searchable
        assert (await svc.stats()).nominations_to_count == 3
        assert "curation_nominated" not in await _markers(svc)

        pending = await svc.store.db.read(memory_store.deferred_nominations, 100)
        assert pending is not None
        assert await deferred.count_pass(svc.store, settings.curation)
        assert not await deferred.count_pass(svc.store, settings.curation)  # nothing left
        marks = await _markers(svc)
        # LIGHT nominates DARK; DARK came first and DEPLOYS is like neither: one nominated job.
        assert marks["curation_nominated"] == 1 and marks["curation_nominee_no_llm_decision"] == 1
        assert (await svc.stats()).nominations_to_count == 0

        # Another process that found the same nominees writes too late: nothing is counted twice.
        lane, items = pending
        rowids = [rowid for rowid, _ in items]
        found = {rowid: [(rowids[0], 0.9)] for rowid in rowids[1:]}
        await svc.store.write(deferred.record_counts, items, found)
        assert await _markers(svc) == marks


async def test_a_memory_forgotten_before_it_is_counted_is_not_counted(make_settings, embedder):
    settings = make_settings()
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", DARK)
        light = (await svc.remember("local", LIGHT)).job
        await _curate_queued(svc)
        [done] = await svc.status("local", [light.id])
        await svc.forget("local", done.memory_id)
        assert (await svc.stats()).nominations_to_count == 1  # forget leaves no row behind: DARK's is left

        assert await deferred.count_pass(svc.store, settings.curation)
        assert "curation_nominated" not in await _markers(svc)
        assert (await svc.stats()).nominations_to_count == 0


async def test_the_running_worker_counts_what_it_left_for_later(make_settings, embedder):
    async with MemoryService(make_settings(), embedder=embedder).running() as svc:
        await svc.remember("local", DARK, wait_ms=15000)
        await svc.remember("local", LIGHT, wait_ms=15000)
        with anyio.fail_after(15):
            while (await svc.stats()).nominations_to_count:
                await anyio.sleep(0.02)
        assert (await _markers(svc))["curation_nominated"] == 1


async def test_with_an_llm_nominees_are_found_before_the_decision(make_settings, embedder):
    with ScriptedLLM(lambda request: Reply("CREATE")) as llm:
        settings = make_settings(llm={"base_url": llm.base_url, "model": "scripted", "timeout_s": 2})
        async with MemoryService(settings, embedder=embedder).running() as svc:
            await svc.remember("local", DARK, wait_ms=15000)
            await svc.remember("local", LIGHT, wait_ms=15000)
            assert (await svc.stats()).nominations_to_count == 0
            marks = await _markers(svc)
    assert len(llm.requests) == 1
    assert marks["curation_nominated"] == 1 and marks["curation_llm_decision_create"] == 1


@pytest.mark.slow
async def test_counting_left_by_an_earlier_process_never_holds_up_a_remember(make_settings, embedder):
    """Counting is for when no job is due: a remember that someone waits for is curated
    between two passes, with most of the backlog (left by a closed process) still to count."""
    settings = make_settings(curation={"batch_size": 1})  # one memory a pass: a long backlog
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        for i in range(200):
            await svc.remember("local", f"Build number {i} passed on the staging cluster")
        await _curate_queued(svc)
        assert (await svc.stats()).nominations_to_count == 200

    async with MemoryService(settings, embedder=embedder).running() as svc:
        with anyio.fail_after(15):
            job = (await svc.remember("local", DEPLOYS, wait_ms=15000)).job
        assert job.status == "done"
        assert (await svc.stats()).nominations_to_count > 100
        with anyio.fail_after(60):
            while (await svc.stats()).nominations_to_count:
                await anyio.sleep(0.05)


NEAR_DUPLICATES = [
    "User prefers dark roast coffee",
    "User prefers light roast coffee",
    "The user likes dark roast coffee",
    "Deploys go out on Fridays",
    "Deploys happen every Friday",
    "Releases go out on Thursdays",
    "The user is allergic to peanuts",
    "User has a peanut allergy",
    "The user is allergic to shellfish",
    "Team standup is at 9:30 every morning",
    "Standup is at 9:30 every weekday",
    "Team retro is on Mondays",
    "The project database is PostgreSQL 16",
    "The office wifi network is called Falcon",
]


async def _nominated(settings, embedder) -> dict[str, int]:
    async with MemoryService(settings, embedder=embedder).running() as svc:
        for text in NEAR_DUPLICATES:
            await svc.remember("local", text)
        with anyio.fail_after(60):
            while (await svc.stats()).queue.get("queued") or (await svc.stats()).nominations_to_count:
                await anyio.sleep(0.05)
        return await _markers(svc)


async def test_counting_later_finds_what_the_inline_scan_finds(make_settings, embedder, tmp_path):
    """The same remembers, once with an LLM that always says CREATE (nominees found inline,
    before the decision) and once without (counted afterwards): as many nominated jobs."""
    with ScriptedLLM(lambda request: Reply("CREATE")) as llm:
        inline = await _nominated(
            make_settings(
                db_path=tmp_path / "inline.db", llm={"base_url": llm.base_url, "model": "scripted", "timeout_s": 5}
            ),
            embedder,
        )
    later = await _nominated(make_settings(db_path=tmp_path / "later.db"), embedder)
    assert inline["curation_nominated"] >= 4  # the clusters above do nominate
    assert later["curation_nominated"] == inline["curation_nominated"]
    assert later["curation_nominee_no_llm_decision"] == inline["curation_llm_decision_create"] == len(llm.requests)
