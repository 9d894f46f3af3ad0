"""Embeddings: the `Embedder` seam, the fastembed implementation, and lazy loading.

The model loads on first use, in a worker thread, so the server answers
`initialize` and `tools/list` before it is ready. Documents are sorted by length
before batching: fastembed pads each batch to its longest text, so mixing a
3-word fact with a page-long note would make the short one pay for the long one.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import anyio
import numpy as np

from .config import BUNDLED_MODEL, EmbeddingSettings
from .errors import EmbeddingError

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """What curation and recall need from an embedding model. Vectors are unit length."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class FastEmbedEmbedder:
    """fastembed's TextEmbedding behind the Embedder protocol."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._settings = settings
        self._model = self._load(settings)
        probe = next(iter(self._model.embed(["probe"])))
        self._dim = int(probe.shape[0])
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

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
                    model_name=BUNDLED_MODEL, specific_model_path=str(model_dir), threads=threads
                )
            kwargs = {"specific_model_path": str(settings.model_path)} if settings.model_path else {}
            return TextEmbedding(model_name=settings.model, threads=threads, **kwargs)
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

    def embed_query(self, text: str) -> np.ndarray:
        with self._cache_lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
                return cached
        vector = np.asarray(next(iter(self._model.embed([text]))), dtype=np.float32)
        vector.setflags(write=False)
        with self._cache_lock:
            self._query_cache[text] = vector
            if len(self._query_cache) > 512:
                self._query_cache.popitem(last=False)
        return vector


class LazyEmbedder:
    """Loads the configured embedder once, off the event loop; remembers a failure."""

    def __init__(self, settings: EmbeddingSettings, embedder: Embedder | None = None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._error: EmbeddingError | None = None
        self._lock = anyio.Lock()

    @property
    def enabled(self) -> bool:
        return self._embedder is not None or self._settings.enabled

    @property
    def error(self) -> EmbeddingError | None:
        return self._error

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
