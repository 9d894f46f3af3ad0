"""The SQLite reader keeps the memory rows recent recalls read (store/sqlite/row_cache.py): a
read must still see every change committed since, whoever made it -- this store's writer or
another process on the same file -- and a forgotten memory must not come back from it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memwal_mcp.normalize import norm_key
from memwal_mcp.store.records import MemoryRow
from memwal_mcp.store.sqlite.backend import SQLiteStore
from memwal_mcp.store.sqlite.row_cache import RowCache

from .store_contract.helpers import lane_of, remember

OWNER = "alice"


@pytest.fixture
async def stores(tmp_path: Path):
    """Two stores on one file: two processes' connections, as far as SQLite can tell."""
    first, second = SQLiteStore(tmp_path / "memwal.db"), SQLiteStore(tmp_path / "memwal.db")
    await first.open()
    await second.open()
    yield first, second
    await second.close()
    await first.close()


async def _bodies(store: SQLiteStore, pks: list[int]) -> dict[int, str]:
    rows = await store.read(lambda reader: reader.memories_by_pk(pks))
    return {pk: row.body for pk, row in rows.items()}


async def _stored(store: SQLiteStore, bodies: list[str]) -> list[int]:
    return [(await store.write(lambda w, body=body: remember(w, OWNER, "default", body))).pk for body in bodies]


async def _merge(store: SQLiteStore, pk: int, body: str) -> None:
    def run(writer):
        with writer.transaction():
            writer.replace_body(
                pk=pk,
                lane=lane_of(writer, OWNER, "default"),
                body=body,
                key=norm_key(body),
                vector=None,
                model_id=None,
                decision="updated",
                job_id=None,
                llm_model=None,
                guard=None,
                now=2e9,
            )

    await store.write(run)


async def test_a_body_changed_by_another_process_is_read_fresh(stores):
    first, second = stores
    pks = await _stored(first, ["The deploy day is Friday.", "Coffee: oat milk flat white."])
    assert (await _bodies(first, pks))[pks[0]] == "The deploy day is Friday."  # now held

    await _merge(second, pks[0], "The deploy day is Thursday.")

    assert await _bodies(first, pks) == {pks[0]: "The deploy day is Thursday.", pks[1]: "Coffee: oat milk flat white."}


async def test_a_memory_forgotten_elsewhere_or_here_is_not_read_back(stores):
    first, second = stores
    pks = await _stored(first, ["My locker code is 4417.", "The cat is called Miso.", "Rent is due on the 3rd."])
    held = await first.read(lambda reader: reader.memories_by_pk(pks))
    assert len(held) == 3

    await second.write(lambda w: w.forget_memory(OWNER, held[pks[0]].id))
    assert set(await _bodies(first, pks)) == {pks[1], pks[2]}

    await first.write(lambda w: w.forget_memory(OWNER, held[pks[1]].id))
    assert set(await _bodies(first, pks)) == {pks[2]}


async def test_a_change_by_this_stores_writer_is_read_fresh(stores):
    first, _ = stores
    (pk,) = await _stored(first, ["Standup is at 9:30."])
    assert await _bodies(first, [pk]) == {pk: "Standup is at 9:30."}

    await _merge(first, pk, "Standup is at 10:00.")

    assert await _bodies(first, [pk]) == {pk: "Standup is at 10:00."}


def _row(pk: int, body: str) -> MemoryRow:
    return MemoryRow(pk, f"m_{pk:016x}", OWNER, "default", body, 0, 1.0, 1.0, None, 1, norm_key(body))


def test_held_rows_are_not_read_again_until_a_write_and_the_bound_empties_the_cache():
    conn = sqlite3.connect(":memory:")
    fetched: list[list[int]] = []

    def fetch(_conn, pks):
        fetched.append(sorted(pks))
        return {pk: _row(pk, "x" * 40) for pk in pks}

    cache = RowCache(max_chars=100)
    assert list(cache.rows(conn, [3, 1], fetch)) == [1, 3]  # rowid order, whatever was asked
    assert list(cache.rows(conn, [2, 3, 1], fetch)) == [1, 2, 3]
    assert fetched == [[1, 3], [2]]  # only the row not held was read

    cache.invalidate()  # what the store does after each of its writes
    cache.rows(conn, [1], fetch)
    assert fetched[-1] == [1]

    cache.rows(conn, [4, 5, 6], fetch)  # 120 more characters: over the bound, so emptied first
    cache.rows(conn, [1], fetch)
    assert fetched[-2:] == [[4, 5, 6], [1]]
