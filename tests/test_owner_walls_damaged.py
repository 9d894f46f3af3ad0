"""Owner walls hold even when a stored row points across them.

Import refuses such rows and `check` reports them, but forget and history must not trust
the store either: a memory of bob's whose `retired_into` names alice's memory (a damaged
file, or one written by an older release) must neither be erased by alice's forget nor
shown in alice's history.
"""

from __future__ import annotations

from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite.connection import connect


async def test_forget_and_history_ignore_another_owners_row_that_names_the_memory(service: MemoryService) -> None:
    alice = (await service.remember("alice", "Alice keeps the spare key under the blue pot", wait_ms=10_000)).job
    bob = (await service.remember("bob", "Bob's locker code is written in his notebook", wait_ms=10_000)).job
    assert alice.memory_id and bob.memory_id
    conn = connect(service.settings.db_path)
    try:
        with conn:  # the damage: bob's memory claims to be folded into alice's
            conn.execute(
                "UPDATE memories SET status = 'retired', retired_into = ? WHERE id = ?",
                (alice.memory_id, bob.memory_id),
            )
    finally:
        conn.close()

    history = await service.history("alice", alice.memory_id)
    assert bob.memory_id not in history.merged_from

    outcome = await service.forget("alice", alice.memory_id)
    assert outcome.erased_memories == (alice.memory_id,)
    conn = connect(service.settings.db_path)
    try:
        (body,) = conn.execute("SELECT body FROM memories WHERE id = ?", (bob.memory_id,)).fetchone()
    finally:
        conn.close()
    assert body == "Bob's locker code is written in his notebook"
