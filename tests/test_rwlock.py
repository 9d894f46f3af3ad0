"""The lanes' readers-writer lock: scans share it, syncing has it alone, and a waiting
sync goes before scans that come after it."""

from __future__ import annotations

import threading
import time

from memwal_mcp.rwlock import ReadWriteLock

WAIT_S = 5.0


def _in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_readers_share_the_lock() -> None:
    lock = ReadWriteLock()
    inside = threading.Barrier(2, timeout=WAIT_S)  # both must be inside at once to pass it

    def read() -> None:
        with lock.reading():
            inside.wait()

    threads = [_in_thread(read) for _ in range(2)]
    for thread in threads:
        thread.join(WAIT_S)
    assert not inside.broken and all(not t.is_alive() for t in threads)


def test_a_writer_waits_for_readers_and_then_has_the_lock_alone() -> None:
    lock = ReadWriteLock()
    events: list[str] = []
    reading, release = threading.Event(), threading.Event()

    def read() -> None:
        with lock.reading():
            reading.set()
            release.wait(WAIT_S)
            events.append("reader done")

    def write() -> None:
        with lock.writing():
            events.append("writer in")
            time.sleep(0.05)
            events.append("writer out")

    reader = _in_thread(read)
    assert reading.wait(WAIT_S)
    writer = _in_thread(write)
    time.sleep(0.1)
    assert events == []  # the writer waits for the reader
    release.set()
    reader.join(WAIT_S)
    writer.join(WAIT_S)
    assert events == ["reader done", "writer in", "writer out"]

    late: list[str] = []

    def late_reader() -> None:
        with lock.reading():
            late.append("read")

    with lock.writing():
        thread = _in_thread(late_reader)
        time.sleep(0.1)
        assert late == []  # no reader while the writer holds it
    thread.join(WAIT_S)
    assert late == ["read"]


def test_a_waiting_writer_goes_before_readers_that_come_after_it() -> None:
    """Else a stream of overlapping scans would keep a lane from ever being brought up to date."""
    lock = ReadWriteLock()
    order: list[str] = []
    first_in, release_first = threading.Event(), threading.Event()

    def first_reader() -> None:
        with lock.reading():
            first_in.set()
            release_first.wait(WAIT_S)
            order.append("first reader out")

    def writer() -> None:
        with lock.writing():
            order.append("writer")

    def second_reader() -> None:
        with lock.reading():
            order.append("second reader")

    threads = [_in_thread(first_reader)]
    assert first_in.wait(WAIT_S)
    threads.append(_in_thread(writer))
    time.sleep(0.1)  # the writer is waiting now
    threads.append(_in_thread(second_reader))
    time.sleep(0.1)
    assert order == []  # the second reader queues behind the waiting writer
    release_first.set()
    for thread in threads:
        thread.join(WAIT_S)
    assert order == ["first reader out", "writer", "second reader"]
