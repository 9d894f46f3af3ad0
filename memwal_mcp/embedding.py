"""Embeddings: the `Embedder` seam, the fastembed implementation, and lazy loading.

The model loads on first use, in a worker thread, so the server answers
`initialize` and `tools/list` before it is ready. Documents are sorted by length
before batching: fastembed pads each batch to its longest text, so mixing a
3-word fact with a page-long note would make the short one pay for the long one.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import sys
import threading
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable

import anyio
import numpy as np
from anyio import RunFinishedError, from_thread
from anyio.lowlevel import EventLoopToken, current_token

from . import heap
from .bundled_model import BundledModel, prepare_model_dir
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


# ONNX Runtime's CPU arena keeps the largest batch's buffers for good: 52 MiB here, for no
# measurable speed (151 vs 152 texts/s on one thread without it).
NO_ARENA: dict[str, Any] = {"enable_cpu_mem_arena": False}
QUERY_CACHE = 512  # query vectors kept (a recall repeated, or asked again in another mode)


def readable(vector: np.ndarray) -> bool:
    """Whether a vector carries meaning: not the zero vector of a text the model cannot read."""
    return bool(vector.any())


def _is_punctuation(piece: str) -> bool:
    piece = piece.removeprefix("##")
    return bool(piece) and all(unicodedata.category(ch)[0] in "PS" for ch in piece)


def _piece_weights(tokenizer: Any, special: set[int]) -> np.ndarray | None:
    """Per token id: 1 a piece of meaning, -1 [UNK], 0 punctuation, special tokens and
    padding; None for a tokenizer without an unknown token (byte-level BPE reads everything)."""
    unk_token = getattr(tokenizer.model, "unk_token", None)
    unk_id = tokenizer.token_to_id(unk_token) if unk_token else None
    if unk_id is None:
        return None
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    weight = np.zeros(max(vocab.values()) + 1, dtype=np.int8)
    for piece, index in vocab.items():
        if index not in special and not _is_punctuation(piece) and not (piece.startswith("[") and piece.endswith("]")):
            weight[index] = 1
    weight[unk_id] = -1
    return weight


def _blanked(vectors: np.ndarray, ids: np.ndarray, mask: np.ndarray, weight: np.ndarray) -> np.ndarray:
    pieces = weight[np.clip(ids, 0, len(weight) - 1)] * (np.asarray(mask) > 0)
    known, unknown = (pieces == 1).sum(axis=1), (pieces == -1).sum(axis=1)
    unreadable = (known == 0) | (unknown > known)
    if unreadable.any():
        vectors = np.array(vectors, copy=True)
        vectors[unreadable] = 0.0
    return vectors


def _blank_unreadable(model: object) -> None:
    """Make the model answer the zero vector for a text whose word pieces are mostly [UNK].

    WordPiece maps a word it has no pieces for (Thai, many CJK characters, Javanese, most
    emoji) to one [UNK], so every such text embeds to nearly the same vector: "กาแฟ" (coffee)
    matched a Thai cat fact and "🎂🎉" at cosine 1. A text is unreadable when it has no known
    piece that is not punctuation, or more [UNK] pieces than known ones. The check reads the
    token ids already made for the model (its pooling step receives them), so nothing is
    tokenized twice. A model without an unknown token and anything unexpected about
    fastembed's internals leave it as it is."""
    if isinstance(model, BundledModel):
        bundled_weight = _piece_weights(model.tokenizer, model.special_ids)
        if bundled_weight is not None:
            model.post_process = lambda vectors, ids, mask: _blanked(vectors, ids, mask, bundled_weight)
        return
    try:
        inner = model.model  # type: ignore[attr-defined]  # fastembed's ONNX embedding
        weight = _piece_weights(inner.tokenizer, set(getattr(inner, "special_token_to_id", {}).values()))
        if weight is None:
            return
        post_process = inner._post_process_onnx_output
    except Exception as exc:
        log.debug("not checking texts for unknown word pieces: %s", exc)
        return

    def blanked(output: Any, **kwargs: Any) -> Any:
        vectors = post_process(output, **kwargs)
        return _blanked(vectors, np.asarray(output.input_ids), output.attention_mask, weight)

    inner._post_process_onnx_output = blanked


def background_embed(embedder: Embedder, *, scans_beside: bool = False) -> Callable[[Sequence[str]], np.ndarray]:
    """How work nobody is waiting on (curation) embeds: the embedder's low-priority path
    when it has one, else its ordinary `embed_documents`. `scans_beside`: curation runs
    its nomination scans next to the embedding (an LLM is configured), see start_background."""
    method = getattr(embedder, "embed_in_background", None)
    return embedder.embed_documents if method is None else partial(method, scans_beside=scans_beside)


class FastEmbedEmbedder:
    """The embedding model behind the Embedder protocol (the bundled one run directly, see
    bundled_model.BundledModel; any other through fastembed's TextEmbedding): one copy of the
    model, shared by recall and curation.

    Its ONNX session has no thread pool (one intra-op thread): every run computes on the
    thread that calls it, at that thread's CPU priority, and ONNX Runtime lets many threads
    run one session at once. So a recall embeds its query on its own thread at normal
    priority, curation embeds on low-priority threads of its own (`embed_in_background`),
    and a batch someone waits for is split over the cores (`embed_documents`), all on the
    same weights. Each copy of the model holds about 95 MiB (ONNX Runtime folds the int8
    weights into float32 at load): three copies made the stdio server's peak 635 MiB after a
    2,000-fact burst; one, about 300. Without a pool there are no pool threads to spin after
    a run and hold the cores the vector scan needs next."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._settings = settings
        self._model = self._load(settings)
        _blank_unreadable(self._model)
        heap.trim()  # what the load freed: folding the weights leaves ~60 MiB behind
        probe = next(iter(self._model.embed(["probe"])))
        self._dim = int(probe.shape[0])
        self._query_cache: LRU[str, np.ndarray] = LRU(QUERY_CACHE)
        self._runners = settings.threads or os.cpu_count() or 1
        self._pool: ThreadPoolExecutor | None = None
        self._background: _LowPriorityRunners | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _load(settings: EmbeddingSettings) -> Any:  # BundledModel, or a fastembed TextEmbedding
        try:
            if settings.model == BUNDLED_MODEL:
                return BundledModel(settings.model_path or prepare_model_dir())
        except EmbeddingError:
            raise
        except Exception as exc:
            where = f" from {settings.model_path}" if settings.model_path else ""
            raise EmbeddingError(
                f"the bundled embedding model could not be loaded{where}: {exc}. "
                "Reinstall memwal-mcp, check MEMWAL_EMBEDDING__MODEL_PATH, or set the model to 'none'."
            ) from exc
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(f"fastembed cannot be imported: {exc}") from exc

        try:
            kwargs: dict[str, Any] = {"specific_model_path": str(settings.model_path)} if settings.model_path else {}
            return TextEmbedding(model_name=settings.model, threads=1, **kwargs, **NO_ARENA)
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
    def session(self) -> Any:
        """The one ONNX Runtime session every embedding runs on (None where fastembed hides it)."""
        if isinstance(self._model, BundledModel):
            return self._model.session
        return getattr(getattr(self._model, "model", None), "model", None)

    @property
    def dim(self) -> int:
        return self._dim

    def _embed_sorted(self, texts: Sequence[str]) -> np.ndarray:
        """Embed on the calling thread, in order (the caller sorted them by length)."""
        vectors = np.empty((len(texts), self._dim), dtype=np.float32)
        for slot, vector in enumerate(self._model.embed(list(texts), batch_size=self._settings.batch_size)):
            vectors[slot] = vector
        return vectors

    def _chunks(self, texts: Sequence[str]) -> tuple[list[list[int]], list[list[str]]]:
        """Length-sorted chunks of `batch_size` texts: fastembed pads a run to its longest text."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        size = self._settings.batch_size
        parts = [order[i : i + size] for i in range(0, len(order), size)]
        return parts, [[texts[i] for i in part] for part in parts]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """At normal priority, the chunks spread over `threads` threads (the caller's among them)."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts, chunks = self._chunks(texts)
        results: list[np.ndarray | None] = [None] * len(chunks)
        taken = itertools.count()

        def work() -> None:  # each thread takes the next chunk when free: none waits on a slower one
            while (index := next(taken)) < len(chunks):
                results[index] = self._embed_sorted(chunks[index])

        helpers = min(self._runners, len(chunks)) - 1
        if helpers > 0:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self._runners - 1, thread_name_prefix="memwal-embed")
                pool = self._pool
            futures = [pool.submit(work) for _ in range(helpers)]
            work()
            for future in futures:
                future.result()
        else:
            work()
        vectors = np.empty((len(texts), self._dim), dtype=np.float32)
        for part, result in zip(parts, results):
            vectors[part] = result
        return vectors

    def embed_in_background(self, texts: Sequence[str], *, scans_beside: bool = False) -> np.ndarray:
        """`embed_documents` on threads at a lower CPU priority (Linux), so tool calls preempt
        curation: on 2 cores a curation batch otherwise takes both, and every tool call waits
        for a core at each thread hop (remember over stdio: 2 ms alone, 3.5-4.5 ms beside a
        busy worker). Off Linux, the ordinary path."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        background = self.start_background(scans_beside=scans_beside)
        if background is None:
            return self.embed_documents(texts)
        parts, chunks = self._chunks(texts)
        vectors = np.empty((len(texts), self._dim), dtype=np.float32)
        for part, result in zip(parts, background.run(chunks)):
            vectors[part] = result
        return vectors

    def start_background(self, *, scans_beside: bool = False) -> _LowPriorityRunners | None:
        """The low-priority threads (None off Linux). The first call decides how many: one per
        core (`threads`), each taking the next chunk when free; one alone in a process that
        holds a large lane and scans it for nominees beside the embedding (an LLM is
        configured): 1,000 jobs at 1M curated at 116/s with the embedding on both cores,
        131-133/s on one."""
        if not sys.platform.startswith("linux"):
            return None
        with self._lock:
            if self._background is None:
                runners = self._runners
                if scans_beside and heap.resident_bytes() >= heap.LARGE:
                    runners = 1
                self._background = _LowPriorityRunners(self._embed_sorted, runners)
            return self._background

    def close(self) -> None:
        """Stop the threads this embedder started (ONNX Runtime aborts the process if the
        interpreter exits while a thread is inside it)."""
        with self._lock:
            background, self._background = self._background, None
            pool, self._pool = self._pool, None
        if background is not None:
            background.close()
        if pool is not None:
            pool.shutdown(wait=True)

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_cache.get(text)
        if cached is not None:
            return cached
        vector = np.asarray(next(iter(self._model.embed([text]))), dtype=np.float32)
        vector.setflags(write=False)
        self._query_cache.put(text, vector)
        return vector


class _LowPriorityRunners:
    """Daemon threads at nice +BACKGROUND_NICE, each running the shared model on the chunks it
    takes from one queue. A chunk computes on the thread that runs it (the session has no
    pool), so the whole embedding runs at that priority, and a tool call (nice 0) preempts
    it. Separate runners beat one run with a thread per core once other work shares the
    cores: ONNX Runtime's parallel steps wait for their slowest thread, and a preempted one
    stalls them all. A runner takes the next chunk as soon as it is free -- whichever batch
    it belongs to -- so a runner slowed down by other work never leaves the other idle (each
    idled 13 % of a curation run when a batch was split in halves, one per runner)."""

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray], runners: int) -> None:
        self._requests: queue.SimpleQueue[tuple[list[str], Future[np.ndarray]] | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(
                target=self._serve, args=(embed, self._requests), name=f"memwal-embed-background-{index}", daemon=True
            )
            for index in range(max(1, runners))
        ]
        for thread in self._threads:
            thread.start()

    @property
    def runners(self) -> int:
        return len(self._threads)

    def close(self, timeout: float = 60.0) -> None:
        for _ in self._threads:
            self._requests.put(None)
        for thread in self._threads:
            thread.join(timeout)

    def run(self, chunks: Sequence[list[str]]) -> list[np.ndarray]:
        """The vectors of each chunk, in order; an error of any chunk is raised here."""
        futures: list[Future[np.ndarray]] = []
        for chunk in chunks:
            futures.append(Future())
            self._requests.put((chunk, futures[-1]))
        return [future.result() for future in futures]

    @staticmethod
    def _serve(
        embed: Callable[[Sequence[str]], np.ndarray],
        requests: queue.SimpleQueue[tuple[list[str], Future[np.ndarray]] | None],
    ) -> None:
        lower_this_thread()
        while (request := requests.get()) is not None:
            texts, done = request
            try:
                vectors = embed(texts)
                heap.trim_if_large()
                done.set_result(vectors)
            except BaseException as exc:
                done.set_exception(exc)


# A load may outlive its callers; cli.main then ends the process without the runtime's destructors.
LOAD_THREAD = "memwal-model-load"


@dataclass(slots=True)
class _Load:
    """One load of the model: set when it has ended; what it raised, if not an EmbeddingError."""

    done: anyio.Event
    unexpected: BaseException | None = None


class LazyEmbedder:
    """Loads the configured embedder once, off the event loop; remembers a failure."""

    def __init__(self, settings: EmbeddingSettings, embedder: Embedder | None = None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._owned = embedder is None
        self._error: EmbeddingError | None = None
        self._loading: _Load | None = None
        self._closed = False

    @property
    def enabled(self) -> bool:
        return self._embedder is not None or self._settings.enabled

    @property
    def error(self) -> EmbeddingError | None:
        return self._error

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads when a recall or curation first needs it)."""
        return self._embedder is not None

    async def close(self) -> None:
        """Release what this loader started (an embedder passed in belongs to the caller); a load
        still running closes what it makes itself."""
        self._closed = True
        if self._owned and isinstance(self._embedder, FastEmbedEmbedder):
            await anyio.to_thread.run_sync(self._embedder.close)

    async def get(self) -> Embedder | None:
        """The embedder, or None when vectors are disabled or the model failed to load.

        The model loads once, on a daemon thread of its own, and callers wait for an event: one
        cancelled meanwhile (Ctrl-C, a client's cancel, the worker stopping) stops waiting at once,
        and neither the shutdown nor the interpreter's exit waits for a load nobody needs any more
        (a load that did not end held an interrupted `analyze` until it was killed)."""
        if self._embedder is not None:
            return self._embedder
        if not self._settings.enabled or self._error is not None or self._closed:
            return None
        load = self._loading
        if load is None:
            load = self._loading = _Load(anyio.Event())
            token = current_token()
            threading.Thread(target=self._load, args=(load, token), name=LOAD_THREAD, daemon=True).start()
        await load.done.wait()
        if load.unexpected is not None:
            raise load.unexpected
        return self._embedder

    def _load(self, load: _Load, token: EventLoopToken) -> None:
        embedder: FastEmbedEmbedder | None = None
        error: EmbeddingError | None = None
        try:
            embedder = FastEmbedEmbedder(self._settings)
        except EmbeddingError as exc:
            error = exc
        except BaseException as exc:  # noqa: BLE001 - given to the callers waiting, raised there
            load.unexpected = exc
        try:
            kept = from_thread.run_sync(self._loaded, load, embedder, error, token=token)
        except RunFinishedError:  # the event loop has ended: nobody waits for it any more
            kept = False
        if embedder is not None and not kept:
            embedder.close()

    def _loaded(self, load: _Load, embedder: FastEmbedEmbedder | None, error: EmbeddingError | None) -> bool:
        """On the event loop: what the load made; False when it is not wanted (closed meanwhile)."""
        if load.unexpected is not None:
            self._loading = None  # the next call tries again, as before
        elif error is not None:
            self._error = error
            log.error("%s; continuing without vectors (lexical recall only)", error)
        elif embedder is not None and not self._closed:
            self._embedder = embedder
            log.info("embedding model %s loaded (dim %d)", embedder.model_id, embedder.dim)
        load.done.set()
        return self._embedder is embedder and embedder is not None
