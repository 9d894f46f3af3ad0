"""Vectors of the texts a recall scores outside the indexes: queued jobs (read-your-writes)
and memories still waiting for a vector.

While a lane has a backlog -- a bulk import, or many agents remembering at once -- every
recall that falls back scores the same newest queued jobs. Embedding them again each time
made such a recall take about 1.5 s at 256 jobs (and slowed curation, which shares the
cores); each text is embedded once here instead.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..embedding import Embedder

CAPACITY = 1024  # texts (1.5 MiB of vectors at 384 dimensions)


def _key(model_id: str, text: str) -> tuple[str, bytes]:
    """By a digest of the text, not the text: a remember may be 64 KiB (more if configured),
    and 1,024 of those would hold 64 MiB of keys."""
    return model_id, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class UnindexedVectors:
    """A bounded, thread-safe cache of document vectors by (model, text digest), least
    recently used out."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`, in order; only those not seen before go to the model (in one call)."""
        keys = [_key(embedder.model_id, text) for text in texts]
        with self._lock:
            found = {key: self._vectors[key] for key in keys if key in self._vectors}
            for key in found:
                self._vectors.move_to_end(key)
        first_text = dict(zip(keys, texts))  # each missing key once, with its text
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            fresh = embedder.embed_documents([first_text[key] for key in missing])
            with self._lock:
                for key, vector in zip(missing, fresh):
                    vector = np.asarray(vector, dtype=np.float32)
                    vector.setflags(write=False)
                    found[key] = self._vectors[key] = vector
                while len(self._vectors) > self._capacity:
                    self._vectors.popitem(last=False)
        if not keys:
            return np.empty((0, embedder.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys])
