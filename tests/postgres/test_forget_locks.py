"""A forget on PostgreSQL facing another session: a row lock it cannot get ends it within
`[storage] lock_wait_s`, as SQLite's busy deadline does, with nothing erased and the write lock
released; and every forget reply says what PostgreSQL leaves on its disk."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import anyio
import psycopg
import pytest

from memwal_mcp.commands import forget
from memwal_mcp.config import load_settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import StoreUnavailable
from memwal_mcp.schemas import ForgetOut
from memwal_mcp.service import MemoryService

from ..store_contract.helpers import remember

SECRET = "The boathouse key code is 9931 frobnitzel"
LOCK_WAIT_S = 0.5


async def test_a_row_lock_ends_the_forget_in_time_and_damages_nothing(
    tmp_path: Path, pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    service = MemoryService(load_settings(db_url=pg_url, storage={"lock_wait_s": LOCK_WAIT_S}), embedder=embedder)
    async with service.running():
        secret = await service.store.write(remember, "alice", "default", SECRET)
        with psycopg.connect(pg_url, application_name="row-locker") as holder:
            holder.execute("BEGIN")
            holder.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (secret.id,))
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as refused:
                await service.forget("alice", secret.id)
            assert time.monotonic() - started < LOCK_WAIT_S + 5
            message = str(refused.value)
            assert "\n" not in message
            assert message.endswith(f"stayed locked by another session for {LOCK_WAIT_S:g}s; try again"), message
            # The write lock went with the rolled-back transaction: another owner's write goes on.
            with anyio.fail_after(10):
                await service.store.write(remember, "bob", "default", "Bob's bike is blue")
            holder.rollback()
        # Nothing was half-done: the memory is whole and found.
        found = await service.recall("alice", "boathouse key code", limit=5)
        assert [hit.text for hit in found.hits] == [SECRET]
        done = ForgetOut.of(await service.forget("alice", secret.id))
        assert done.wal_cleared and not done.already_forgotten
        assert not (await service.recall("alice", "boathouse key code", limit=5)).hits


async def test_the_reply_says_copies_may_remain_on_the_servers_disk(
    tmp_path: Path, pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    """VACUUM frees the space but PostgreSQL does not overwrite it: `wal_cleared` must not be
    read as "gone from every file", so the reply names what remains and what an operator can do."""
    service = MemoryService(load_settings(db_url=pg_url), embedder=embedder)
    async with service.running():
        secret = await service.store.write(remember, "alice", "default", SECRET)
        out = ForgetOut.of(await service.forget("alice", secret.id))
    assert out.wal_cleared
    said = out.summary()
    assert said.startswith(f"forgot {secret.id} (")
    for part in (
        "the rows are erased and VACUUMed",
        "PostgreSQL does not overwrite freed space in its data files and write-ahead log",
        "copies of the bytes may remain on the server's disk",
        "VACUUM FULL",
        "encrypted at rest",
    ):
        assert part in said, said
    assert out.disk_copies is not None and out.disk_copies in said


SECOND = "The boathouse alarm code is 4417 frobnitzel"


def _forget_args(**given: object) -> argparse.Namespace:
    args = {"memory_id": None, "query": None, "limit": 5, "namespace": "default", "dry_run": False, "yes": True}
    return argparse.Namespace(**{**args, "json": True, **given})


async def test_a_forget_whose_old_versions_are_kept_says_so_and_names_every_id_to_forget_again(
    pg_url: str, embedder: FastEmbedEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older snapshot keeps the old row versions of both hits: the note must not say they were
    VACUUMed, and the warning must name each id whose copies are kept, not only the first."""
    service = MemoryService(load_settings(db_url=pg_url), embedder=embedder)
    async with service.running():
        owner = service.settings.owner  # the CLI's
        first = await service.store.write(remember, owner, "default", SECRET)
        second = await service.store.write(remember, owner, "default", SECOND)
        with psycopg.connect(pg_url, application_name="old-snapshot") as reader:
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            reader.execute("SELECT count(*) FROM memories").fetchone()
            with pytest.raises(SystemExit) as exited:
                await forget.run(service, _forget_args(query="boathouse frobnitzel code"))
            reader.rollback()
            pid = reader.info.backend_pid
    assert exited.value.code == forget.WAL_KEPT_EXIT
    said = capsys.readouterr()
    outs = json.loads(said.out)
    assert sorted(o["memory_id"] for o in outs) == sorted([first.id, second.id])
    assert "\n" not in said.err.strip(), said.err
    ids = "; ".join(f"memwal-mcp forget {o['memory_id']}" for o in outs)
    assert f"when it ends, run `{ids}` again to VACUUM them away" in said.err, said.err
    for out in outs:
        assert out["wal_cleared"] is False, out
        note = out["disk_copies"]
        assert "VACUUMed" not in note, note
        assert note.startswith(f"the rows are erased, but their old row versions are still kept by pid {pid} ("), note
        assert "until that transaction ends and the forget is run again" in note, note
        assert "PostgreSQL does not overwrite freed space" in note and "VACUUM FULL" in note, note


async def test_forgetting_again_does_not_claim_to_have_vacuumed_what_it_erased_before(
    pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    service = MemoryService(load_settings(db_url=pg_url), embedder=embedder)
    async with service.running():
        secret = await service.store.write(remember, "alice", "default", SECRET)
        await service.forget("alice", secret.id)
        again = ForgetOut.of(await service.forget("alice", secret.id))
    assert again.already_forgotten and again.wal_cleared
    said = again.summary()
    assert said.startswith(
        f"{secret.id} was already forgotten; nothing more was erased; its rows were erased when it was first "
        "forgotten, and VACUUM now finds no old version left in these tables (an earlier VACUUM or this one "
        "removed them), but PostgreSQL does not overwrite freed space"
    ), said
    assert "erased and VACUUMed" not in said, said


async def test_forgetting_again_under_a_later_snapshot_does_not_pin_another_forgets_versions_on_it(
    pg_url: str, embedder: FastEmbedEmbedder
) -> None:
    """VACUUM answers for whole tables: once a memory's forget was VACUUMed clean, a snapshot
    taken later keeps only what later forgets leave. Forgetting the first again must not say
    its own old versions are kept."""
    service = MemoryService(load_settings(db_url=pg_url), embedder=embedder)
    async with service.running():
        first = await service.store.write(remember, "alice", "default", SECRET)
        second = await service.store.write(remember, "alice", "default", SECOND)
        assert ForgetOut.of(await service.forget("alice", first.id)).wal_cleared
        with psycopg.connect(pg_url, application_name="later-snapshot") as reader:
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            reader.execute("SELECT count(*) FROM memories").fetchone()
            await service.forget("alice", second.id)
            again = ForgetOut.of(await service.forget("alice", first.id))
            reader.rollback()
    assert again.already_forgotten
    said = again.summary()
    assert "but their old row versions are still kept" not in said, said
    assert "or another forget's" in said or "no old version left" in said, said
