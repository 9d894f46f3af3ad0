"""Embeddings: the `Embedder` seam, the fastembed implementation, and lazy loading.

The model loads on first use, in a worker thread, so the server answers
`initialize` and `tools/list` before it is ready. Documents are sorted by length
before batching: fastembed pads each batch to its longest text, so mixing a
3-word fact with a page-long note would make the short one pay for the long one.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, Protocol, runtime_checkable

import anyio
import numpy as np

from . import heap
from .config import BUNDLED_MODEL, EmbeddingSettings
from .errors import EmbeddingError
from .lru import LRU
from .priority import lower_this_thread

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """What curation and recall need from an embedding model. Vectors are unit length, except
    the zero vector for a text the model cannot read (`readable`): it matches nothing."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


# ONNX Runtime's CPU arena keeps the largest batch's buffers for good: 52 MiB a model copy
# here, for no measurable speed (151 vs 152 texts/s on one thread without it).
NO_ARENA: dict[str, Any] = {"enable_cpu_mem_arena": False}
# Copies of the model for background embedding, the cores split between them.
BACKGROUND_COPIES = 2
QUERY_CACHE = 512  # query vectors kept (a recall repeated, or asked again in another mode)
# Batches this small embed on the main model: one-shot processes never load the copies.
BACKGROUND_MIN_BATCH = 8
# Longest a curation batch waits for the first copy to load (about 1 s; longer on a busy
# machine) before it takes the main model instead.
LOAD_WAIT_S = 30.0


def readable(vector: np.ndarray) -> bool:
    """Whether a vector carries meaning: not the zero vector of a text the model cannot read."""
    return bool(vector.any())


def _is_punctuation(piece: str) -> bool:
    piece = piece.removeprefix("##")
    return bool(piece) and all(unicodedata.category(ch)[0] in "PS" for ch in piece)


def _blank_unreadable(model: object) -> None:
    """Make fastembed answer the zero vector for a text whose word pieces are mostly [UNK].

    WordPiece maps a word it has no pieces for (Thai, many CJK characters, Javanese, most
    emoji) to one [UNK], so every such text embeds to nearly the same vector: "กาแฟ" (coffee)
    matched a Thai cat fact and "🎂🎉" at cosine 1. A text is unreadable when it has no known
    piece that is not punctuation, or more [UNK] pieces than known ones. The check reads the
    token ids fastembed already made for the model (its pooling step receives them), so
    nothing is tokenized twice. A model without an unknown token (byte-level BPE reads
    everything) and anything unexpected about fastembed's internals leave it as it is."""
    try:
        inner = model.model  # type: ignore[attr-defined]  # fastembed's ONNX embedding
        tokenizer = inner.tokenizer
        unk_token = getattr(tokenizer.model, "unk_token", None)
        unk_id = tokenizer.token_to_id(unk_token) if unk_token else None
        if unk_id is None:
            return
        vocab = tokenizer.get_vocab(with_added_tokens=True)
        # 1 a piece of meaning, -1 [UNK], 0 punctuation, special tokens and padding
        weight = np.zeros(max(vocab.values()) + 1, dtype=np.int8)
        special = set(getattr(inner, "special_token_to_id", {}).values())
        for piece, index in vocab.items():
            if (
                index not in special
                and not _is_punctuation(piece)
                and not (piece.startswith("[") and piece.endswith("]"))
            ):
                weight[index] = 1
        weight[unk_id] = -1
        post_process = inner._post_process_onnx_output
    except Exception as exc:
        log.debug("not checking texts for unknown word pieces: %s", exc)
        return

    def blanked(output: Any, **kwargs: Any) -> Any:
        vectors = post_process(output, **kwargs)
        ids = np.asarray(output.input_ids)
        pieces = weight[np.clip(ids, 0, len(weight) - 1)] * (np.asarray(output.attention_mask) > 0)
        known, unknown = (pieces == 1).sum(axis=1), (pieces == -1).sum(axis=1)
        unreadable = (known == 0) | (unknown > known)
        if unreadable.any():
            vectors = np.array(vectors, copy=True)
            vectors[unreadable] = 0.0
        return vectors

    inner._post_process_onnx_output = blanked


def background_embed(embedder: Embedder, *, scans_beside: bool = False) -> Callable[[Sequence[str]], np.ndarray]:
    """How work nobody is waiting on (curation) embeds: the embedder's low-priority path
    when it has one, else its ordinary `embed_documents`. `scans_beside`: curation runs
    its nomination scans next to the embedding (an LLM is configured), see start_background."""
    method = getattr(embedder, "embed_in_background", None)
    return embedder.embed_documents if method is None else partial(method, scans_beside=scans_beside)


def _stop_spinning(model: object, threads: int | None) -> None:
    """Rebuild fastembed's ONNX session with its threads blocking, not spinning, between runs.

    ONNX Runtime's pool threads spin for a while after each run, and fastembed exposes no
    option against it. After a query embedding they held the cores the vector scan then
    needed: embed + scan of 100k vectors took 16 ms instead of 8 (the embedding alone goes
    from 2.3 to 3.4 ms; document throughput drops about 2 %). Anything unexpected about
    fastembed's internals leaves its own session in place."""
    if threads == 1:  # no pool, nothing spins
        return
    try:
        import onnxruntime as ort

        inner = model.model  # type: ignore[attr-defined]  # fastembed's ONNX embedding
        session = inner.model
        path, providers = session._model_path, session.get_providers()
        inner.model = session = None  # freed before the new one loads: both at once cost ~90 MiB of peak
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_cpu_mem_arena = False
        if threads:
            options.intra_op_num_threads = options.inter_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        inner.model = ort.InferenceSession(path, providers=providers, sess_options=options)
    except Exception as exc:
        log.debug("keeping fastembed's ONNX session as it is: %s", exc)
        return
    heap.trim()  # what the first session freed


class FastEmbedEmbedder:
    """fastembed's TextEmbedding behind the Embedder protocol."""

    def __init__(self, settings: EmbeddingSettings, *, background: bool = False) -> None:
        """`background`: a low-priority copy for curation. Its threads may spin (at nice +10
        that takes nothing from tool calls), which spares it a second load of the model."""
        self._settings = settings
        self._model = self._load(settings)
        if not background:
            _stop_spinning(self._model, settings.threads)
        _blank_unreadable(self._model)
        probe = next(iter(self._model.embed(["probe"])))
        self._dim = int(probe.shape[0])
        self._query_cache: LRU[str, np.ndarray] = LRU(QUERY_CACHE)
        self._background: _LowPriorityModels | None = None
        self._background_lock = threading.Lock()

    @staticmethod
    def _load(settings: EmbeddingSettings):  # -> fastembed.TextEmbedding
        try:
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(f"fastembed cannot be imported: {exc}") from exc

        threads = settings.threads
        try:
            if settings.model == BUNDLED_MODEL:
                from .bundled_model import MODEL_DIM, prepare_model_dir

                model_dir = settings.model_path or prepare_model_dir()
                if BUNDLED_MODEL not in {m["model"] for m in TextEmbedding.list_supported_models()}:
                    TextEmbedding.add_custom_model(
                        model=BUNDLED_MODEL,
                        pooling=PoolingType.MEAN,
                        normalization=True,
                        sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
                        dim=MODEL_DIM,
                        model_file="model.onnx",
                        description="all-MiniLM-L6-v2, int8 ONNX, bundled with memwal-mcp",
                        license="apache-2.0",
                    )
                return TextEmbedding(
                    model_name=BUNDLED_MODEL, specific_model_path=str(model_dir), threads=threads, **NO_ARENA
                )
            kwargs: dict[str, Any] = {"specific_model_path": str(settings.model_path)} if settings.model_path else {}
            return TextEmbedding(model_name=settings.model, threads=threads, **kwargs, **NO_ARENA)
        except EmbeddingError:
            raise
        except Exception as exc:
            where = f" from {settings.model_path}" if settings.model_path else ""
            raise EmbeddingError(
                f"embedding model {settings.model!r} could not be loaded{where}: {exc}. "
                "Check MEMWAL_EMBEDDING__MODEL / MEMWAL_EMBEDDING__MODEL_PATH, or set the model to 'none'."
            ) from exc

    @property
    def model_id(self) -> str:
        return self._settings.model

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), self._dim), dtype=np.float32)
        embedded = self._model.embed([texts[i] for i in order], batch_size=self._settings.batch_size)
        for slot, vector in zip(order, embedded):
            vectors[slot] = vector
        return vectors

    def embed_in_background(self, texts: Sequence[str], *, scans_beside: bool = False) -> np.ndarray:
        """`embed_documents` on copies of the model whose threads run at a lower CPU priority
        (Linux). On 2 cores a curation batch otherwise takes both, and every tool call waits
        for a core at each thread hop (remember over stdio: 2 ms alone, 3.5-4.5 ms beside a
        busy worker). The copies load once a batch of BACKGROUND_MIN_BATCH texts comes, in
        their threads, and from then on curation waits for them; before that, and off Linux,
        the ordinary path is used."""
        background = self._background
        if background is None and len(texts) >= BACKGROUND_MIN_BATCH:
            background = self.start_background(scans_beside=scans_beside)
        vectors = background.run(texts) if background is not None else None
        return vectors if vectors is not None else self.embed_documents(texts)

    def start_background(self, *, scans_beside: bool = False) -> _LowPriorityModels | None:
        """The background copies (loading in their threads until ready); None off Linux. The
        first call decides how many and on how many cores; `scans_beside`, see below."""
        if not sys.platform.startswith("linux"):
            return None
        with self._background_lock:
            if self._background is None:
                cores = os.cpu_count() or 1
                copies = min(BACKGROUND_COPIES, cores)
                threads = self._settings.threads or max(1, cores // copies)
                if heap.resident_bytes() >= heap.LARGE:
                    # A process this big holds a large lane's vectors: one copy saves ~90 MiB
                    # and one load's transient ~100 MiB. With an LLM, curation scans that
                    # lane for nominees beside the embedding, and the copy keeps one copy's
                    # share of the cores (1,000 jobs at 1M: 116/s with the copy on both
                    # cores, 131-133/s on one). Without, nominees are counted later
                    # (curation/deferred.py) and the copy takes every core: 2,000 jobs at
                    # 1M, 141/s on one core, 221/s on two.
                    copies = 1
                    if not scans_beside and not self._settings.threads:
                        threads = cores
                settings = self._settings.model_copy(update={"threads": threads})
                self._background = _LowPriorityModels(
                    lambda: FastEmbedEmbedder(settings, background=True).embed_documents,
                    copies,
                    self._settings.batch_size,
                )
            return self._background

    def close(self) -> None:
        """Stop the background copies (waiting for a load in progress: ONNX Runtime aborts the
        process if the interpreter exits while a thread is inside it)."""
        with self._background_lock:
            background, self._background = self._background, None
        if background is not None:
            background.close()

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_cache.get(text)
        if cached is not None:
            return cached
        vector = np.asarray(next(iter(self._model.embed([text]))), dtype=np.float32)
        vector.setflags(write=False)
        self._query_cache.put(text, vector)
        return vector


class _LowPriorityModels:
    """Copies of the model, each on its own daemon thread at nice +BACKGROUND_NICE with its
    share of the cores, all taking work from one queue. Each thread lowers its own priority
    before loading, so the ONNX Runtime threads it creates inherit it. Independent copies
    beat one copy with a thread per core once other work shares the cores: ONNX Runtime's
    parallel steps wait for their slowest thread, and a preempted one stalls them all.
    A batch goes in as length-sorted chunks of `chunk` texts, and a copy takes the next
    chunk as soon as it is free -- whichever batch it belongs to -- so a copy slowed down
    by other work never leaves the other idle (each copy idled 13 % of a curation run when
    a batch was split in halves, one per copy). Each copy costs about 100 MiB. A copy that
    cannot load answers None, and the caller uses its own path."""

    def __init__(self, load: Callable[[], Callable[[Sequence[str]], np.ndarray]], copies: int, chunk: int) -> None:
        self._chunk = max(1, chunk)
        self._requests: queue.SimpleQueue[tuple[list[str], Future[np.ndarray | None]] | None] = queue.SimpleQueue()
        self._loaded: list[threading.Event] = []
        self._threads: list[threading.Thread] = []
        for index in range(max(1, copies)):
            loaded = threading.Event()
            previous = self._loaded[-1] if self._loaded else None
            thread = threading.Thread(
                target=self._serve,
                args=(load, self._requests, loaded, previous),
                name=f"memwal-embed-background-{index}",
                daemon=True,
            )
            self._loaded.append(loaded)
            self._threads.append(thread)
            thread.start()

    def ready(self, timeout: float | None = 0) -> bool:
        """Whether every copy has finished loading (waiting up to `timeout` seconds)."""
        return all(loaded.wait(timeout) for loaded in self._loaded)

    def close(self, timeout: float = 60.0) -> None:
        for _ in self._threads:
            self._requests.put(None)
        for thread in self._threads:
            thread.join(timeout)

    def run(self, texts: Sequence[str]) -> np.ndarray | None:
        """The vectors, once the first copy has loaded (the others join the queue as they
        load), or None if a copy failed to load. Curation waits for the first load rather
        than embedding on the main model meanwhile: at normal priority, beside a burst of
        remembers, that put remember p50 over stdio at 1M at 3.5-3.9 ms."""
        if not self._loaded[0].wait(LOAD_WAIT_S):
            return None
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = [order[i : i + self._chunk] for i in range(0, len(order), self._chunk)]
        futures: list[Future[np.ndarray | None]] = []
        for part in parts:
            futures.append(Future())
            self._requests.put(([texts[i] for i in part], futures[-1]))
        results = [future.result() for future in futures]
        if not results or any(result is None for result in results):
            return None
        vectors = np.empty((len(texts), results[0].shape[1]), dtype=np.float32)  # type: ignore[union-attr]
        for part, result in zip(parts, results):
            vectors[part] = result
        return vectors

    @staticmethod
    def _serve(
        load: Callable[[], Callable[[Sequence[str]], np.ndarray]],
        requests: queue.SimpleQueue[tuple[list[str], Future[np.ndarray | None]] | None],
        loaded: threading.Event,
        previous: threading.Event | None,
    ) -> None:
        lower_this_thread()
        embed: Callable[[Sequence[str]], np.ndarray] | None = None
        if previous is not None:  # one load at a time: each briefly needs twice its final memory
            previous.wait()
        try:
            embed = load()
        except Exception:
            log.warning(
                "a low-priority copy of the embedding model failed to load; curation embeds at normal priority",
                exc_info=True,
            )
        heap.trim()  # what the load freed: 134 MiB for two copies
        loaded.set()
        while (request := requests.get()) is not None:
            texts, done = request
            try:
                vectors = embed(texts) if embed is not None else None
                heap.trim_if_large()
                done.set_result(vectors)
            except BaseException as exc:
                done.set_exception(exc)


class LazyEmbedder:
    """Loads the configured embedder once, off the event loop; remembers a failure."""

    def __init__(self, settings: EmbeddingSettings, embedder: Embedder | None = None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._owned = embedder is None
        self._error: EmbeddingError | None = None
        self._lock = anyio.Lock()

    @property
    def enabled(self) -> bool:
        return self._embedder is not None or self._settings.enabled

    @property
    def error(self) -> EmbeddingError | None:
        return self._error

    async def close(self) -> None:
        """Release what this loader started (an embedder passed in belongs to the caller)."""
        if self._owned and isinstance(self._embedder, FastEmbedEmbedder):
            await anyio.to_thread.run_sync(self._embedder.close)

    async def get(self) -> Embedder | None:
        """The embedder, or None when vectors are disabled or the model failed to load."""
        if self._embedder is not None:
            return self._embedder
        if not self._settings.enabled or self._error is not None:
            return None
        async with self._lock:
            if self._embedder is None and self._error is None:
                try:
                    self._embedder = await anyio.to_thread.run_sync(FastEmbedEmbedder, self._settings)
                    log.info("embedding model %s loaded (dim %d)", self._embedder.model_id, self._embedder.dim)
                except EmbeddingError as exc:
                    self._error = exc
                    log.error("%s; continuing without vectors (lexical recall only)", exc)
        return self._embedder
