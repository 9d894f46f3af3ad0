"""Vectors of the texts a recall scores outside the indexes: queued jobs (read-your-writes)
and memories still waiting for a vector.

While a lane has a backlog -- a bulk import, or many agents remembering at once -- every
recall that falls back scores the same queued jobs. Embedding them again each time made
such a recall take about 1.5 s at 256 jobs (and slowed curation, which shares the cores);
each text is embedded once here instead, and a recall embeds only a few new ones per call
(recall/search.py), so the backlog's vectors build up across recalls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..embedding import Embedder
from ..lru import LRU

CAPACITY = 1024  # texts (1.5 MiB of vectors at 384 dimensions)


def _key(model_id: str, text: str) -> tuple[str, bytes]:
    """By a digest of the text, not the text: a remember may be 64 KiB (more if configured),
    and 1,024 of those would hold 64 MiB of keys."""
    return model_id, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class UnindexedVectors:
    """Document vectors by (model, text digest), the least recently used out."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._vectors: LRU[tuple[str, bytes], np.ndarray] = LRU(capacity)

    def cached(self, embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The vectors already known for `texts` (None where not), without calling the model."""
        return [self._vectors.get(_key(embedder.model_id, text)) for text in texts]

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`, in order; only those not seen before go to the model (in one call)."""
        keys = [_key(embedder.model_id, text) for text in texts]
        found = {key: vector for key in keys if (vector := self._vectors.get(key)) is not None}
        first_text = dict(zip(keys, texts))  # each missing key once, with its text
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            for key, vector in zip(missing, embedder.embed_documents([first_text[key] for key in missing])):
                vector = np.asarray(vector, dtype=np.float32)
                vector.setflags(write=False)
                found[key] = vector
                self._vectors.put(key, vector)
        if not keys:
            return np.empty((0, embedder.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys])
