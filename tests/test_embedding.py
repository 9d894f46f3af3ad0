"""The real bundled embedding model, its integrity checks, and the database's dimension guard."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memwal_mcp import bundled_model
from memwal_mcp.config import EmbeddingSettings
from memwal_mcp.embedding import BACKGROUND_COPIES, Embedder, FastEmbedEmbedder
from memwal_mcp.errors import EmbeddingError
from memwal_mcp.priority import BACKGROUND_NICE
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import vectors


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_dimension_and_identity(embedder: FastEmbedEmbedder) -> None:
    assert embedder.dim == bundled_model.MODEL_DIM == 384
    assert embedder.model_id == "memwal/all-MiniLM-L6-v2-int8"
    assert isinstance(embedder, Embedder)


def test_vectors_are_unit_length_float32(embedder: FastEmbedEmbedder) -> None:
    docs = embedder.embed_documents(["User prefers dark roast coffee", "x", "Deploys go out on Fridays " * 20])
    assert docs.shape == (3, 384)
    assert docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    query = embedder.embed_query("what coffee does the user like?")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-3


def test_empty_batch(embedder: FastEmbedEmbedder) -> None:
    out = embedder.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_embed_documents_preserves_input_order(embedder: FastEmbedEmbedder) -> None:
    # lengths deliberately out of order, so the internal length sort permutes them
    texts = [
        "The production database runs PostgreSQL 16 on a dedicated host in us-east-1 with nightly backups "
        "kept for thirty days and a warm standby in us-west-2.",
        "tabs",
        "Deploys go out on Fridays.",
        "User prefers dark roast coffee in the morning only, and green tea in the afternoon.",
        "ok",
        "The API key rotation happens every ninety days and is owned by the platform team.",
        "Use pnpm, not npm.",
    ]
    docs = embedder.embed_documents(texts)
    assert docs.shape == (len(texts), 384)
    for i, text in enumerate(texts):
        expected = embedder.embed_query(text)
        assert cosine(docs[i], expected) > 0.999, f"row {i} is not the embedding of {text!r}"
        # and it is not just "every row looks alike"
        others = [cosine(docs[i], embedder.embed_query(t)) for j, t in enumerate(texts) if j != i]
        assert max(others) < 0.99


def test_paraphrase_is_closer_than_unrelated(embedder: FastEmbedEmbedder) -> None:
    anchor = embedder.embed_query("The user likes dark roast coffee")
    paraphrase, unrelated = embedder.embed_documents(
        ["User prefers strong, dark-roasted coffee", "Deploys go out on Fridays from us-east-1"]
    )
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.2


def test_query_cache_returns_the_same_vector(embedder: FastEmbedEmbedder) -> None:
    first = embedder.embed_query("what does the user drink in the morning?")
    second = embedder.embed_query("what does the user drink in the morning?")
    assert second is first
    np.testing.assert_array_equal(first, second)
    # the cached vector cannot be corrupted by a caller
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0] = 42.0
    other = embedder.embed_query("what does the user drink in the evening?")
    assert other is not first and not np.array_equal(other, first)


# --- bundled model integrity ----------------------------------------------------


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_source_files_are_verified() -> None:
    files = bundled_model.source_files()
    assert set(files) == {"model.onnx", "tokenizer.json", "tokenizer_config.json"}
    for path in files.values():
        assert path.is_file(), path
    assert sha256(files["model.onnx"]) == bundled_model.ONNX_SHA256
    assert sha256(files["tokenizer.json"]) == bundled_model.TOKENIZER_SHA256


def test_prepare_model_dir_links_the_verified_files(tmp_path: Path) -> None:
    folder = bundled_model.prepare_model_dir(tmp_path / "cache")
    for name, source in bundled_model.source_files().items():
        assert (folder / name).resolve() == source.resolve() or sha256(folder / name) == sha256(source)
    # a second start (another server process) finds it ready and keeps it intact
    assert bundled_model.prepare_model_dir(tmp_path / "cache") == folder
    assert sha256(folder / "model.onnx") == bundled_model.ONNX_SHA256


def test_tampered_file_is_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(b"definitely not the model")
    with pytest.raises(EmbeddingError) as caught:
        bundled_model._verified(tampered, bundled_model.ONNX_SHA256)
    message = str(caught.value)
    assert bundled_model.ONNX_SHA256 in message
    assert sha256(tampered) in message
    assert str(tampered) in message


def test_one_flipped_byte_is_refused(tmp_path: Path) -> None:
    source = bundled_model.source_files()["tokenizer.json"]
    copy = tmp_path / "tokenizer.json"
    shutil.copyfile(source, copy)
    assert bundled_model._verified(copy, bundled_model.TOKENIZER_SHA256) == copy
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(EmbeddingError, match=bundled_model.TOKENIZER_SHA256):
        bundled_model._verified(copy, bundled_model.TOKENIZER_SHA256)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="missing"):
        bundled_model._verified(tmp_path / "nope.onnx", bundled_model.ONNX_SHA256)


# --- dimension refusal -------------------------------------------------------------


class TinyHashEmbedder:
    """A deterministic 8-dimensional embedder: token hashes into buckets, unit length."""

    model_id = "test/tiny-hash-8"
    dim = 8

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in text.lower().split():
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=2).digest()
            vector[digest[0] % self.dim] += 1.0 if digest[1] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            norm = 1.0
        return vector / norm

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


def test_tiny_embedder_fits_the_protocol() -> None:
    tiny = TinyHashEmbedder()
    assert isinstance(tiny, Embedder)
    vectors = tiny.embed_documents(["a b c", "d"])
    assert vectors.shape == (2, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


COFFEE = "User prefers dark roast coffee"
DEPLOYS = "Deploys go out on Fridays from us-east-1"


async def _bind_then_mismatch(settings: Any, embedder: FastEmbedEmbedder) -> str:
    """Bind the file to the real 384-d model, then reopen it with the 8-d one; returns the refusal message."""
    first = MemoryService(settings, embedder=embedder)
    async with first.running():
        outcome = await first.remember("local", COFFEE, wait_ms=10_000)
        assert outcome.job.status == "done"
        result = await first.recall("local", "what coffee does the user like?")
        assert [h.text for h in result.hits] == [COFFEE]
        assert (await first.stats()).vector_model == (embedder.model_id, 384)

    second = MemoryService(settings, embedder=TinyHashEmbedder())
    async with second.running():
        with pytest.raises(EmbeddingError) as caught:
            await second.recall("local", "what coffee does the user like?")
        # a remember meanwhile is still kept (stored without a vector), never lost
        kept = await second.remember("local", DEPLOYS, wait_ms=10_000)
        assert kept.job.status == "done", kept.job
        # the database stays bound to the original model
        assert (await second.stats()).vector_model == (embedder.model_id, 384)
        unembedded = await second.store.db.read(vectors.unembedded, 10)
        assert [body for _, _, body in unembedded] == [DEPLOYS]
    return str(caught.value)


async def test_database_refuses_a_model_of_another_dimension(
    make_settings: Callable[..., Any], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    message = await _bind_then_mismatch(settings, embedder)
    assert "384" in message and "8 dimensions" in message
    assert embedder.model_id in message and TinyHashEmbedder.model_id in message

    # back on the original model: the worker gives the fact stored during the mismatch its vector
    third = MemoryService(settings, embedder=embedder)
    async with third.running():
        deadline = time.monotonic() + 10
        while await third.store.db.read(vectors.unembedded, 10):
            assert time.monotonic() < deadline, "the worker never embedded the backlog"
            await asyncio.sleep(0.05)
        result = await third.recall("local", "coffee preferences", limit=1)
        assert [h.text for h in result.hits] == [COFFEE]
        result = await third.recall("local", "when do deploys happen?", limit=1)
        assert [h.text for h in result.hits] == [DEPLOYS]


async def test_memory_without_vector_is_recallable_before_backlog_embedding(
    make_settings: Callable[..., Any], embedder: FastEmbedEmbedder
) -> None:
    settings = make_settings()
    await _bind_then_mismatch(settings, embedder)
    # a process that does not run the worker (server.worker = false): nothing re-embeds the fact
    reader = MemoryService(settings, embedder=embedder)
    async with reader.running(worker=False):
        result = await reader.recall("local", DEPLOYS, limit=5)
        assert DEPLOYS in [h.text for h in result.hits]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities are set on Linux only")
def test_background_embedding_matches_and_runs_at_low_priority(embedder: FastEmbedEmbedder) -> None:
    texts = ["User prefers dark roast coffee", "Deploys go out on Fridays", "x"]
    background_models = embedder.start_background()
    assert background_models is not None and background_models.ready(timeout=60)
    np.testing.assert_allclose(embedder.embed_in_background(texts), embedder.embed_documents(texts), atol=1e-5)
    background = [t for t in threading.enumerate() if t.name.startswith("memwal-embed-background-")]
    assert 1 <= len(background) <= BACKGROUND_COPIES
    low = min(os.getpriority(os.PRIO_PROCESS, thread.native_id) for thread in background)
    assert low >= BACKGROUND_NICE
    # The calling thread keeps its priority: only the background copy yields.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) <= low
    embedder.close()  # what MemoryService.close does: the copies' threads end
    assert not any(thread.is_alive() for thread in background)


def _low_priority_tasks() -> set[int]:
    tasks = set()
    for name in os.listdir("/proc/self/task"):
        try:
            if os.getpriority(os.PRIO_PROCESS, int(name)) >= BACKGROUND_NICE:
                tasks.add(int(name))
        except OSError:  # the thread ended meanwhile
            pass
    return tasks


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities are set on Linux only")
@pytest.mark.parametrize("scans_beside", [True, False], ids=["llm-scans-beside", "no-llm"])
def test_a_process_holding_a_large_lane_runs_one_copy(monkeypatch, scans_beside) -> None:
    """Above heap.LARGE resident, one copy (for memory). With an LLM it keeps one copy's
    share of the cores, and the rest are for the nomination scans of the big lane; without,
    nominees are counted later and the copy takes every core. Its threads -- the copy's own
    and ONNX Runtime's pool, all niced -- are counted from the OS."""
    from memwal_mcp import heap

    monkeypatch.setattr(heap, "LARGE", 0)  # as if this process held a 1M lane
    model = FastEmbedEmbedder(EmbeddingSettings())
    before = _low_priority_tasks()
    try:
        copies = model.start_background(scans_beside=scans_beside)
        assert copies is not None and copies.ready(timeout=60)
        named = [t for t in threading.enumerate() if t.name.startswith("memwal-embed-background-")]
        assert len(named) == 1
        cores = os.cpu_count() or 1
        share = max(1, cores // BACKGROUND_COPIES) if scans_beside else cores
        assert len(_low_priority_tasks() - before) == share
        texts = ["User prefers dark roast coffee", "Deploys go out on Fridays"]
        np.testing.assert_allclose(model.embed_in_background(texts), model.embed_documents(texts), atol=1e-5)
    finally:
        model.close()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the copies run on Linux only")
def test_a_batch_that_starts_the_copies_waits_for_one_instead_of_using_the_main_model(monkeypatch) -> None:
    """Embedding it on the main model meanwhile (normal priority, every core) competed with the
    tool calls of the burst that made the batch."""
    from memwal_mcp import embedding as embedding_module

    monkeypatch.setattr(embedding_module, "BACKGROUND_COPIES", 1)
    model = FastEmbedEmbedder(EmbeddingSettings())
    try:
        texts = [f"fact number {i} about the deploy schedule" for i in range(embedding_module.BACKGROUND_MIN_BATCH)]
        vectors = model.embed_in_background(texts)
        copies = model.start_background()  # the ones that call started
        assert copies is not None and copies.ready(timeout=0)  # loaded before the batch came back
        np.testing.assert_allclose(vectors, model.embed_documents(texts), atol=1e-5)
    finally:
        model.close()


def test_the_main_model_threads_do_not_spin_between_runs(embedder) -> None:
    """Guards the hook into fastembed's internals (a silent fallback would bring back the
    spinning threads that slowed every recall's vector scan)."""
    session = embedder._model.model.model
    assert session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"
    vectors = embedder.embed_documents(["ports and regions", "a longer text about the deploy schedule"])
    assert vectors.shape == (2, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_texts_the_model_cannot_read_embed_to_the_zero_vector(embedder: FastEmbedEmbedder) -> None:
    """Thai, many CJK characters, Javanese and emoji are all [UNK] to WordPiece: their vectors were
    nearly identical (cosine ~1), so each matched every other. Now they carry no dense signal."""
    unreadable = ["ผู้ใช้ชอบกาแฟ", "แมวของฉันชื่อมิว", "🎂🎉", "用户喜欢喝咖啡", "ꦱꦼꦤꦼꦁ", "?!..."]
    readable = ["User prefers dark roast coffee", "我的猫叫小白", "東京タワーに行きました", "Party 🎉"]
    docs = embedder.embed_documents([*unreadable, *readable])
    for text, vector in zip(unreadable, docs):
        assert not vector.any(), text
        assert not embedder.embed_query(text).any(), text
    for text, vector in zip(readable, docs[len(unreadable) :]):
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3, text
