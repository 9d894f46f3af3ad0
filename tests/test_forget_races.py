"""Forget against the queue: a repeat of the forgotten text that is still queued, or that a
worker has read but not applied, must not bring the fact back; and forgetting releases the
idempotency keys of what it erased.

The worker is the real one, run a pass at a time (`run_once`) so each interleaving is made
on purpose instead of hoped for; where it must be caught between reading its batch and
applying it, the real model (or the scripted LLM) holds it there until the forget is done.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import anyio
import numpy as np
import pytest

from memwal_mcp.errors import IdempotencyKeyReused
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite.integrity import find_problems
from tests.scripted_llm import Reply, ScriptedLLM
from tests.wrapped_models import WrappedEmbedder

FACT = "Dentist appointment on 2026-12-05 with Dr Quarnby"
WAIT_S = 30.0  # upper bound for one step; a hang fails instead of blocking the run


class GatedEmbedder(WrappedEmbedder):
    """The real model; while the gate is shut, a document batch waits in the worker's thread."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not self.gate.is_set():
            self.waiting.set()
            assert self.gate.wait(WAIT_S), "the test never opened the gate"
        return super().embed_documents(texts)


async def _texts(svc: MemoryService, namespace: str = "*") -> list[str]:
    return sorted(item.text for item in (await svc.list("local", namespace=namespace, limit=100)).items)


async def _errors(svc: MemoryService) -> list[str]:
    """What `memwal-mcp check` would call broken: erased jobs must agree with their memory."""
    return [p.line() for p in await svc.store.db.read(find_problems) if p.severity == "error"]


async def test_a_repeat_queued_before_the_forget_is_erased_with_it(make_settings, embedder):
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running(worker=False):
        await svc.remember("local", FACT)
        await svc.worker.run_once()
        memory = (await svc.list("local")).items[0].id
        repeat = (await svc.remember("local", "  dentist APPOINTMENT on 2026-12-05 with Dr Quarnby ")).job
        other_fact = (await svc.remember("local", "Dentist appointment moved to 2026-12-09")).job
        elsewhere = (await svc.remember("local", FACT, namespace="work")).job

        outcome = await svc.forget("local", memory)
        assert outcome.erased_jobs == 2  # the source job and the queued repeat
        (erased,) = await svc.status("local", [repeat.id])
        assert (erased.status, erased.decision, erased.text, erased.memory_id) == ("done", "forgotten", "", memory)

        while await svc.worker.run_once():
            pass
        # Only the same text in the same namespace goes: another fact, or another namespace, stays.
        assert await _texts(svc) == sorted(["Dentist appointment moved to 2026-12-09", FACT])
        assert await _texts(svc, "default") == ["Dentist appointment moved to 2026-12-09"]
        kept = await svc.status("local", [other_fact.id, elsewhere.id])
        assert [job.decision for job in kept] == ["created", "created"]
        hits = (await svc.recall("local", "dentist appointment Quarnby", limit=5)).hits
        assert FACT not in [hit.text for hit in hits]
        assert await _errors(svc) == []


async def test_a_repeat_the_worker_read_before_the_forget_is_not_applied_after_it(make_settings, embedder):
    gated = GatedEmbedder(embedder)
    svc = MemoryService(make_settings(), embedder=gated)
    async with svc.running(worker=False):
        await svc.remember("local", FACT)
        await svc.worker.run_once()
        memory = (await svc.list("local")).items[0].id

        gated.gate.clear()
        await svc.remember("local", "The car is due for its MOT in March")  # needs a vector: holds the batch
        repeat = (await svc.remember("local", FACT)).job
        async with anyio.create_task_group() as tg:
            tg.start_soon(svc.worker.run_once)
            # The worker has read both jobs and is embedding the batch; it applies them after this.
            assert await anyio.to_thread.run_sync(gated.waiting.wait, WAIT_S)
            outcome = await svc.forget("local", memory)
            gated.gate.set()
        assert outcome.erased_jobs == 2

        assert await _texts(svc) == ["The car is due for its MOT in March"]
        (erased,) = await svc.status("local", [repeat.id])
        assert (erased.status, erased.decision, erased.text) == ("done", "forgotten", "")
        assert await _errors(svc) == []


UPDATED = "Dentist appointment on 2026-12-05 with Dr Quarnby at 09:30"


async def test_a_repeat_waiting_for_the_llm_during_the_forget_is_not_applied_after_it(make_settings, embedder):
    """The memory's body changed since (an UPDATE), so the repeat of its first text goes to the
    LLM; the forget lands while the LLM thinks, and the decision that comes back is dropped."""
    thinking, answer = threading.Event(), threading.Event()
    calls: list[dict] = []

    def script(request: dict) -> Reply:
        calls.append(request)
        if len(calls) == 1:
            return Reply(f"UPDATE C1\n---\n{UPDATED}")
        thinking.set()
        assert answer.wait(WAIT_S), "the test never let the LLM answer"
        return Reply("CREATE")

    with ScriptedLLM(script) as llm:
        svc = MemoryService(make_settings(llm={"base_url": llm.base_url, "model": "scripted"}), embedder=embedder)
        async with svc.running(worker=False):
            await svc.remember("local", FACT)
            await svc.worker.run_once()
            await svc.remember("local", "Dentist appointment on 2026-12-05 with Dr Quarnby, at 09:30")
            await svc.worker.run_once()
            (item,) = (await svc.list("local")).items
            assert item.text == UPDATED, "the first text must survive only as a revision"

            repeat = (await svc.remember("local", FACT)).job
            async with anyio.create_task_group() as tg:
                tg.start_soon(svc.worker.run_once)
                assert await anyio.to_thread.run_sync(thinking.wait, WAIT_S)
                outcome = await svc.forget("local", item.id)
                answer.set()
            assert outcome.erased_jobs == 3

            assert await _texts(svc) == []
            (erased,) = await svc.status("local", [repeat.id])
            assert (erased.status, erased.decision, erased.text) == ("done", "forgotten", "")
            assert await _errors(svc) == []


async def test_forgetting_releases_the_idempotency_key_of_what_it_erased(service: MemoryService):
    first = (await service.remember("local", FACT, idempotency_key="k2", wait_ms=10000)).job
    await service.forget("local", first.memory_id)

    moved = await service.remember(
        "local", "Dentist appointment moved to 2026-12-09", idempotency_key="k2", wait_ms=10000
    )
    assert not moved.replayed and moved.job.id != first.id
    assert (moved.job.status, moved.job.decision) == ("done", "created")
    assert [hit.text for hit in (await service.recall("local", "dentist appointment", limit=5)).hits] == [
        "Dentist appointment moved to 2026-12-09"
    ]
    # The key names the new job now, with the usual rules.
    again = await service.remember("local", "Dentist appointment moved to 2026-12-09", idempotency_key="k2")
    assert again.replayed and again.job.id == moved.job.id
    with pytest.raises(IdempotencyKeyReused, match="'k2'"):
        await service.remember("local", "Dentist appointment on 2026-12-05", idempotency_key="k2")
    # The erased job keeps no key (nor text) of its own.
    (old,) = await service.status("local", [first.id])
    assert (old.idempotency_key, old.text, old.decision) == (None, "", "forgotten")
