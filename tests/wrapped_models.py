"""The real embedding model behind the Embedder protocol, with one behaviour changed for a
test: documents that cannot be embedded, or a record of what was embedded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memwal_mcp.embedding import Embedder


class WrappedEmbedder:
    """Passes everything to the real model."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


class PoisonEmbedder(WrappedEmbedder):
    """A batch containing "POISON" cannot be embedded."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.document_calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.document_calls += 1
        if any("POISON" in t for t in texts):
            raise RuntimeError("this test model refuses to embed POISON")
        return super().embed_documents(texts)


class CountingEmbedder(WrappedEmbedder):
    """Remembers which texts it was asked to embed as documents, call by call."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.documents: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents.append(list(texts))
        return super().embed_documents(texts)
