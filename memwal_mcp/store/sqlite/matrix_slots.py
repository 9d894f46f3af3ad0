"""rowid -> row index of a lane's matrix, compact enough for a lane of a million rows.

Its own module because it is a data structure with one job and its own invariants (a dict
while the lane is small or its rowids are scattered, an int32 array over their span once
they are dense), tested on its own; LaneMatrix (matrix.py) is its only user.
"""

from __future__ import annotations

import numpy as np


class _Slots:
    """rowid -> row index of a lane. A dict costs about 110 bytes an entry (110 MiB at 1M
    rows). A big lane whose rowids are dense enough -- memories get increasing rowids, so
    one bulk-filled or long-lived lane mostly is -- keeps an int32 array over their span
    instead, 4 bytes per rowid in the span (-1: not in the lane)."""

    DENSE_MIN = 4096  # rows before an array is considered
    DENSE_SPAN = 8  # at most this many rowids of span per row in the lane

    def __init__(self) -> None:
        self._dict: dict[int, int] | None = {}
        self._pos = np.empty(0, dtype=np.int32)
        self._base = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, rowid: int) -> bool:
        return self.get(rowid) is not None

    def __getitem__(self, rowid: int) -> int:
        index = self.get(rowid)
        if index is None:
            raise KeyError(rowid)
        return index

    def get(self, rowid: int) -> int | None:
        if self._dict is not None:
            return self._dict.get(rowid)
        i = rowid - self._base
        if 0 <= i < len(self._pos) and self._pos[i] >= 0:
            return int(self._pos[i])
        return None

    def set(self, rowid: int, index: int) -> None:
        self.set_many(np.array([rowid], dtype=np.int64), index)

    def set_many(self, rowids: np.ndarray, first: int) -> None:
        """rowids[j] -> first + j."""
        if not len(rowids):
            return
        indices = np.arange(first, first + len(rowids), dtype=np.int64)
        low, high = int(rowids.min()), int(rowids.max())
        if self._dict is not None and not self._dict and len(rowids) >= self.DENSE_MIN:
            if high - low + 1 <= self.DENSE_SPAN * len(rowids):  # a whole lane at once (its file): no dict
                span = high - low + 1
                self._dict, self._pos, self._base = None, np.full(span + span // 8, -1, dtype=np.int32), low
        if self._dict is not None:
            before = len(self._dict)
            self._dict.update(zip(rowids.tolist(), indices.tolist()))
            self._count += len(self._dict) - before
            if self._count >= self.DENSE_MIN:
                self._to_array()
            return
        if low < self._base or high >= self._base + len(self._pos):
            if not self._cover(low, high):
                self._to_dict()
                self.set_many(rowids, first)
                return
        offsets = rowids - self._base
        self._count += int(np.count_nonzero(self._pos[offsets] < 0))
        self._pos[offsets] = indices

    def pop(self, rowid: int) -> int | None:
        if self._dict is not None:
            index = self._dict.pop(rowid, None)
        else:
            index = self.get(rowid)
            if index is not None:
                self._pos[rowid - self._base] = -1
        if index is not None:
            self._count -= 1
        return index

    def _cover(self, low: int, high: int) -> bool:
        """Widen the array to hold rowids low..high; False if that would be too sparse."""
        base = min(low, self._base) if len(self._pos) else low
        end = max(high + 1, self._base + len(self._pos))
        span = end - base
        if span > self.DENSE_SPAN * max(self._count, self.DENSE_MIN):
            return False
        end = base + span + span // 8  # headroom for the rowids still to come
        grown = np.full(end - base, -1, dtype=np.int32)
        if len(self._pos):
            grown[self._base - base : self._base - base + len(self._pos)] = self._pos
        self._pos, self._base = grown, base
        return True

    def _to_array(self) -> None:
        assert self._dict is not None
        rowids = np.fromiter(self._dict.keys(), dtype=np.int64, count=len(self._dict))
        low, high = int(rowids.min()), int(rowids.max())
        if high - low + 1 > self.DENSE_SPAN * len(rowids):
            return
        indices = np.fromiter(self._dict.values(), dtype=np.int64, count=len(self._dict))
        self._pos, self._base = np.empty(0, dtype=np.int32), low
        self._cover(low, high)
        self._pos[rowids - self._base] = indices
        self._dict = None

    def _to_dict(self) -> None:
        offsets = np.flatnonzero(self._pos >= 0)
        self._dict = dict(zip((offsets + self._base).tolist(), self._pos[offsets].tolist()))
        self._pos = np.empty(0, dtype=np.int32)
