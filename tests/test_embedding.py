"""The real bundled embedding model, its integrity checks, and the database's dimension guard."""

from __future__ import annotations

import asyncio
import gc
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
from memwal_mcp.embedding import Embedder, FastEmbedEmbedder
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


def test_a_model_folder_left_by_a_removed_installation_is_repaired(tmp_path: Path) -> None:
    """The cache outlives the venv that filled it (a removed checkout, a rebuilt uvx env): a
    tokenizer file that is a link into it must not break every other installation's model."""
    folder = bundled_model.prepare_model_dir(tmp_path / "cache")
    gone = tmp_path / "removed-venv" / "tokenizer.json"
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
        (folder / name).symlink_to(gone)  # dangling, as an older version left it
    assert bundled_model.prepare_model_dir(tmp_path / "cache") == folder
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert not (folder / name).is_symlink()
        assert sha256(folder / name) == sha256(bundled_model.source_files()[name])


def test_a_staging_folder_an_interrupted_first_load_left_is_swept_later(tmp_path: Path) -> None:
    """A Ctrl-C during the first load ends the process while ONNX Runtime writes the optimized
    graph into its staging folder (31-47 MB); the next load removes one that old, not one a
    load running now may be writing."""
    folder = bundled_model.prepare_model_dir(tmp_path / "cache")
    stale, fresh = (folder.parent / f".{folder.name}.{suffix}" for suffix in ("left1234", "busy5678"))
    for staging in (stale, fresh):
        staging.mkdir()
        (staging / "model.onnx").write_bytes(b"")
    old = time.time() - bundled_model.STALE_STAGING_S - 60
    os.utime(stale, (old, old))
    assert bundled_model.prepare_model_dir(tmp_path / "cache") == folder
    assert not stale.exists() and fresh.exists()


def test_prepare_model_dir_links_the_verified_files(tmp_path: Path) -> None:
    folder = bundled_model.prepare_model_dir(tmp_path / "cache")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        source = bundled_model.source_files()[name]
        assert (folder / name).resolve() == source.resolve() or sha256(folder / name) == sha256(source)
    assert (folder / "model.onnx").is_file() and (folder / bundled_model.WEIGHTS_FILE).is_file()
    made = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    # a second start (another server process) finds it ready and keeps it intact
    assert bundled_model.prepare_model_dir(tmp_path / "cache") == folder
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == made
    shipped = folder.with_name(folder.name.split("-ort")[0])
    assert sha256(shipped / "model.onnx") == bundled_model.ONNX_SHA256
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no staging left behind


@pytest.mark.slow
def test_the_bundled_model_embeds_as_fastembed_does(embedder: FastEmbedEmbedder) -> None:
    """It runs without fastembed (whose imports cost 36 MiB), the way fastembed ran it for
    every vector stored so far: same tokenizer settings, pooling and normalization."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    name = "memwal-test/all-MiniLM-L6-v2-int8"
    if name not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
            dim=bundled_model.MODEL_DIM,
            model_file="model.onnx",
        )
    reference = TextEmbedding(model_name=name, specific_model_path=str(bundled_model.prepare_model_dir()), threads=1)
    texts = [
        "User prefers dark roast coffee",
        "Deploys go out on Fridays from us-east-1 at 14:05, v2.3.1, see /etc/memwal/config.toml",
        " ".join(["a long text that is truncated at the model's context"] * 60),
        "x",
        "Ünïcödé ﬁ ligatures and   spaces",
    ]
    np.testing.assert_allclose(embedder.embed_documents(texts), np.array(list(reference.embed(texts))), atol=1e-6)


@pytest.mark.slow
def test_the_optimized_model_embeds_as_the_shipped_file_does(embedder: FastEmbedEmbedder) -> None:
    """The server loads the saved optimized graph; vectors stored by earlier versions, made
    from the shipped file, must match what it computes now."""
    folder = bundled_model.prepare_model_dir()
    shipped = folder.with_name(folder.name.split("-ort")[0])
    as_shipped = FastEmbedEmbedder(EmbeddingSettings(model_path=shipped))
    try:
        texts = ["User prefers dark roast coffee", "Deploys go out on Fridays from us-east-1", "กาแฟ", "x"]
        np.testing.assert_allclose(embedder.embed_documents(texts), as_shipped.embed_documents(texts), atol=1e-5)
    finally:
        as_shipped.close()


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
    np.testing.assert_allclose(embedder.embed_in_background(texts), embedder.embed_documents(texts), atol=1e-5)
    runners = embedder.start_background()
    assert runners is not None and runners.runners == (os.cpu_count() or 1)
    background = [t for t in threading.enumerate() if t.name.startswith("memwal-embed-background-")]
    assert len(background) == runners.runners
    low = min(os.getpriority(os.PRIO_PROCESS, thread.native_id) for thread in background)
    assert low >= BACKGROUND_NICE
    # The calling thread keeps its priority: only the background work yields.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) <= low


def _sessions() -> int:
    import onnxruntime

    gc.collect()
    return sum(1 for thing in gc.get_objects() if isinstance(thing, onnxruntime.InferenceSession))


async def _remember_recall_reindex(settings: Any) -> tuple[list[str], int]:
    """(recall's hits, model sessions alive) after curation, a recall and a reindex."""
    service = MemoryService(settings)
    async with service.running():
        facts = [f"fact number {i} about the deploy schedule of team {i % 7}" for i in range(40)]
        for text in facts[:-1]:
            await service.remember("local", text)
        await service.remember("local", facts[-1], wait_ms=30000)  # curated: embedded in the background
        hits = (await service.recall("local", "deploy schedule of team 3", limit=3)).hits
        # reindex embeds on the caller's side, spread over the cores
        assert (await service.reindex())[0] == len(facts)
        return [hit.text for hit in hits], _sessions()


@pytest.mark.slow
def test_recall_curation_and_reindex_share_one_copy_of_the_model(make_settings: Callable[..., Any]) -> None:
    """Each copy holds about 95 MiB: the server used to load three (recall's and two for curation)."""
    before = _sessions()
    found, alive = asyncio.run(_remember_recall_reindex(make_settings()))
    assert any("team 3" in text for text in found)
    assert alive - before == 1


async def _idle_then_recall(settings: Any) -> tuple[bool, bool, bool, list[str]]:
    """(loaded or working at start, loaded while idle or after recalling an owner with no
    memories, loaded after the recall, its hits)."""
    first = MemoryService(settings)
    async with first.running(worker=False):
        await first.remember("local", "User prefers dark roast coffee")
        while await first.worker.run_once():  # curated (and embedded) by this earlier server
            pass
    service = MemoryService(settings)
    async with service.running(worker=False):
        at_start = service.embedder.loaded
        worked = await service.worker.run_once()  # the pass an idle worker makes, over and over
        idle = service.embedder.loaded
        assert not (await service.recall("someone-else", "coffee", limit=3)).hits  # nothing to search
        idle = idle or service.embedder.loaded
        hits = (await service.recall("local", "coffee", limit=3)).hits
        return at_start or worked, idle, service.embedder.loaded, [hit.text for hit in hits]


@pytest.mark.slow
def test_an_idle_server_loads_the_model_when_a_recall_first_needs_it(make_settings: Callable[..., Any]) -> None:
    """The model is most of a server's memory: a server with nothing to embed does not hold it,
    nor does a recall with nothing to search."""
    busy_at_start, loaded_while_idle, loaded_after_recall, found = asyncio.run(_idle_then_recall(make_settings()))
    assert not busy_at_start and not loaded_while_idle
    assert loaded_after_recall and found == ["User prefers dark roast coffee"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities are set on Linux only")
@pytest.mark.parametrize("scans_beside", [True, False], ids=["llm-scans-beside", "no-llm"])
def test_a_process_holding_a_large_lane_keeps_a_core_for_its_scans(monkeypatch, scans_beside) -> None:
    """Above heap.LARGE resident, with an LLM (nominees are scanned beside the embedding), one
    runner embeds and the other cores are the scans'; without, nominees are counted later and
    every core embeds."""
    from memwal_mcp import heap

    monkeypatch.setattr(heap, "LARGE", 0)  # as if this process held a 1M lane
    model = FastEmbedEmbedder(EmbeddingSettings())
    try:
        runners = model.start_background(scans_beside=scans_beside)
        assert runners is not None
        assert runners.runners == (1 if scans_beside else os.cpu_count() or 1)
        texts = ["User prefers dark roast coffee", "Deploys go out on Fridays"]
        np.testing.assert_allclose(model.embed_in_background(texts), model.embed_documents(texts), atol=1e-5)
    finally:
        model.close()


def test_the_model_runs_on_the_callers_thread_without_a_pool(embedder: FastEmbedEmbedder) -> None:
    """One intra-op thread: a run computes at its caller's priority, and no pool threads spin
    after it (they held the cores the vector scan needed next); the arena is off."""
    options = embedder.session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert not options.enable_cpu_mem_arena
    vectors = embedder.embed_documents(["ports and regions", "a longer text about the deploy schedule"])
    assert vectors.shape == (2, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_threads_setting_bounds_the_threads_that_embed(embedder: FastEmbedEmbedder) -> None:
    """`threads = 1`: every chunk on the caller's thread (and one background runner)."""
    model = FastEmbedEmbedder(EmbeddingSettings(threads=1, batch_size=2))
    try:
        seen: set[str] = set()
        original = model._embed_sorted

        def recording(texts: Sequence[str]) -> np.ndarray:
            seen.add(threading.current_thread().name)
            return original(texts)

        model._embed_sorted = recording  # type: ignore[method-assign]
        texts = [f"fact {i} about the office coffee machine" for i in range(9)]
        np.testing.assert_allclose(model.embed_documents(texts), embedder.embed_documents(texts), atol=1e-5)
        assert seen == {threading.current_thread().name}
        if sys.platform.startswith("linux"):
            runners = model.start_background()
            assert runners is not None and runners.runners == 1
    finally:
        model.close()


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
