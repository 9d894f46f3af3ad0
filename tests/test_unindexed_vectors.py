"""Facts a recall scores outside the indexes (queued jobs) are embedded once, not per recall."""

from __future__ import annotations

import numpy as np

from memwal_mcp.recall.unindexed_vectors import UnindexedVectors
from memwal_mcp.service import MemoryService
from tests.wrapped_models import CountingEmbedder


def test_each_text_is_embedded_once_until_it_falls_out(embedder) -> None:
    model = CountingEmbedder(embedder)
    cache = UnindexedVectors(capacity=3)
    first = cache.embed(model, ["red bikes", "blue trains", "red bikes"])
    assert model.documents == [["red bikes", "blue trains"]]
    np.testing.assert_allclose(first, embedder.embed_documents(["red bikes", "blue trains", "red bikes"]), atol=1e-6)
    again = cache.embed(model, ["blue trains", "green boats", "red bikes"])
    assert model.documents[1:] == [["green boats"]]
    np.testing.assert_allclose(again, embedder.embed_documents(["blue trains", "green boats", "red bikes"]), atol=1e-6)
    cache.embed(model, ["grey cats"])  # a fourth text: the least recently used ("blue trains") goes
    cache.embed(model, ["red bikes", "blue trains"])
    assert model.documents[2:] == [["grey cats"], ["blue trains"]]
    assert cache.embed(model, []).shape == (0, embedder.dim)


async def test_recalls_during_a_backlog_embed_only_new_queued_facts(make_settings, embedder) -> None:
    model = CountingEmbedder(embedder)
    settings = make_settings(recall={"read_your_writes_wait_ms": 0})
    svc = MemoryService(settings, embedder=model)
    async with svc.running(worker=False):  # nothing curates: every remember stays queued
        facts = ["User prefers dark roast coffee", "Deploys go out on Fridays", "The cat is called Miso"]
        for fact in facts:
            await svc.remember("local", fact)
        hits = (await svc.recall("local", "what coffee does the user drink?")).hits
        assert hits[0].text == facts[0] and hits[0].pending
        assert sorted(text for call in model.documents for text in call) == sorted(facts)

        model.documents.clear()
        hits = (await svc.recall("local", "when are deploys?")).hits
        assert hits[0].text == facts[1]
        assert model.documents == []  # the same queued facts: nothing embedded again

        await svc.remember("local", "The office moves to Lisbon in May")
        hits = (await svc.recall("local", "where is the office moving?")).hits
        assert hits[0].text == "The office moves to Lisbon in May"
        assert model.documents == [["The office moves to Lisbon in May"]]
