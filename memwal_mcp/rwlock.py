"""A readers-writer lock: many readers at once, or one writer.

A lane's in-memory vectors are read far more than they change: a recall's scan and a
curation batch's nomination scan only read them, and both may take hundreds of
milliseconds at 1M vectors. With a plain lock a recall waited for the whole nomination
scan before starting its own (recall p50 at 1M: 111 ms idle, 347 ms while nominees were
being counted). Writers -- bringing the lane up to date -- still get it alone, and a
waiting writer goes before readers that come after it, so a stream of scans cannot keep
the lane stale.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._changed:
            while self._writing or self._writers_waiting:
                self._changed.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._changed:
                self._readers -= 1
                if not self._readers:
                    self._changed.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._changed:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._changed.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._changed:
                self._writing = False
                self._changed.notify_all()
