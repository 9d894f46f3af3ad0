"""Curation's kNN nomination ignores texts the bundled model cannot read: two Thai facts about
different things embedded alike (cosine ~1, all [UNK]) and the second was sent to the LLM as a
possible duplicate of the first. Real SQLite file, the real model, the scripted LLM server."""

from __future__ import annotations

from memwal_mcp.service import MemoryService
from tests.scripted_llm import Reply, ScriptedLLM

THAI_COFFEE = "ผู้ใช้ชอบกาแฟ"  # the user likes coffee
THAI_CAT = "แมวของฉันชื่อมิว"  # my cat is named Mew


async def test_unreadable_facts_are_not_nominated_as_each_others_duplicates(make_settings, embedder) -> None:
    with ScriptedLLM(lambda request: Reply("CREATE")) as llm:
        settings = make_settings(llm={"base_url": llm.base_url, "model": "scripted", "timeout_s": 2})
        svc = MemoryService(settings, embedder=embedder)
        async with svc.running():
            for text in [THAI_COFFEE, "🎂🎉", THAI_CAT]:
                outcome = await svc.remember("local", text, wait_ms=15000)
                assert outcome.job.status == "done" and outcome.job.decision == "created", outcome.job
    assert llm.requests == []
