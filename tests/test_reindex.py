"""Changing the embedding model: detected at start-up, refused at search, fixed by reindex."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence

import numpy as np
import pytest

from memwal_mcp.errors import EmbeddingError
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import reindex as reindex_store

FACTS = [
    "User prefers dark roast coffee",
    "Deploys go out on Fridays from us-east-1",
    "The staging database is PostgreSQL 16",
    "The user's cat is called Miso",
    "Standup is at 9:30 on weekdays",
]


class HashingEmbedder:
    """A small deterministic model of another dimension (8): words hashed into buckets."""

    model_id = "test/hashing-8"
    dim = 8

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        return vector / (np.linalg.norm(vector) or 1.0)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


async def _build_with_bundled_model(make_settings, embedder) -> None:
    svc = MemoryService(make_settings(), embedder=embedder)
    async with svc.running():
        for fact in FACTS:
            await svc.remember("local", fact, wait_ms=10000)


async def test_a_model_change_is_reported_refused_and_fixed_by_reindex(make_settings, embedder, caplog):
    await _build_with_bundled_model(make_settings, embedder)
    other = HashingEmbedder()
    settings = make_settings(embedding={"model": other.model_id})
    svc = MemoryService(settings, embedder=other)
    with caplog.at_level(logging.WARNING, logger="memwal_mcp.service"):
        await svc.start(worker=False)
    try:
        assert any("memwal-mcp reindex" in r.getMessage() for r in caplog.records)
        with pytest.raises(EmbeddingError, match=r"384 dimensions.*8 dimensions|reindex"):
            await svc.recall("local", "coffee")

        seen: list[tuple[int, int]] = []
        done, left = await svc.reindex(batch_size=2, progress=lambda d, t: seen.append((d, t)))
        assert (done, left) == (5, 0)
        assert seen[-1] == (5, 5) and len(seen) == 3

        result = await svc.recall("local", "User prefers dark roast coffee", limit=1)
        assert result.hits[0].text == "User prefers dark roast coffee"
        stats = await svc.stats()
        assert stats.vector_model == (other.model_id, 8)
    finally:
        await svc.close()


async def test_an_interrupted_reindex_resumes_and_the_old_index_answers_meanwhile(make_settings, embedder):
    await _build_with_bundled_model(make_settings, embedder)
    other = HashingEmbedder()
    # A reindex that stopped after its first batch of two.
    writer = MemoryService(make_settings(embedding={"model": other.model_id}), embedder=other)
    async with writer.running(worker=False):
        state = await writer.store.db.write(reindex_store.begin, other.model_id, other.dim)
        rows = await writer.store.db.read(reindex_store.next_batch, 0, 2)
        vectors = other.embed_documents([body for _, _, body in rows])
        await writer.store.db.write(
            reindex_store.write_batch, state, [(r, l, v) for (r, l, _), v in zip(rows, vectors)]
        )

    # Meanwhile a server on the original model still searches the old vectors.
    old = MemoryService(make_settings(), embedder=embedder)
    async with old.running(worker=False):
        assert (await old.recall("local", "coffee", limit=1)).hits[0].text == "User prefers dark roast coffee"
        await old.remember("local", "A fact added during the reindex", wait_ms=0)

    resumed = MemoryService(make_settings(embedding={"model": other.model_id}), embedder=other)
    async with resumed.running(worker=True):
        seen: list[tuple[int, int]] = []
        done, left = await resumed.reindex(batch_size=2, progress=lambda d, t: seen.append((d, t)))
        assert seen[0][0] == 4  # picked up after the two already done
        found = await resumed.recall("local", "A fact added during the reindex", limit=1)
        assert found.hits[0].text == "A fact added during the reindex"
        assert (await resumed.stats()).vector_model == (other.model_id, 8)
