"""Tokens and reindex on PostgreSQL: the calls the contract suite does not reach yet."""

from __future__ import annotations

import numpy as np

from memwal_mcp.store.postgres.backend import PostgresStore

from ..store_contract.helpers import DIM, T0, prepare_vectors, remember, unit_vectors


async def test_tokens_are_stored_listed_and_revoked_by_prefix(pg_store: PostgresStore) -> None:
    await pg_store.write(lambda w: w.insert_token("sha256:abc1", "alice", ("read", "write"), "laptop"))
    await pg_store.write(lambda w: w.insert_token("sha256:abc2", "bob", ("read",), None))
    found = await pg_store.read(lambda r: r.token_by_hash("sha256:abc1"))
    assert found is not None and (found.owner, found.scopes, found.label) == ("alice", ("read", "write"), "laptop")
    assert [t.hash for t in await pg_store.read(lambda r: r.list_tokens())] == ["sha256:abc1", "sha256:abc2"]
    assert sorted(await pg_store.write(lambda w: w.revoke_token("sha256:abc"))) == ["sha256:abc1", "sha256:abc2"]
    assert await pg_store.read(lambda r: r.count_active_tokens()) == 2  # ambiguous: nothing revoked
    assert await pg_store.write(lambda w: w.revoke_token("sha256:abc2")) == ["sha256:abc2"]
    assert await pg_store.read(lambda r: r.count_active_tokens()) == 1


async def test_a_reindex_switches_searches_to_the_new_vectors(pg_store: PostgresStore) -> None:
    rng = np.random.default_rng(31)
    old, new = unit_vectors(rng, 3), unit_vectors(rng, 3, DIM // 2)

    def build(w):  # type: ignore[no-untyped-def]
        prepare_vectors(w)
        return [remember(w, "alice", "default", f"fact {i}", vector=old[i], at=T0 + i) for i in range(3)]

    made = await pg_store.write(build)
    state = await pg_store.write(lambda w: w.reindex_begin("smaller-model", DIM // 2))
    batch = await pg_store.read(lambda r: r.reindex_batch(0, 2))
    assert [pk for pk, _, _ in batch] == [m.pk for m in made[:2]]
    mark = await pg_store.write(
        lambda w: w.reindex_write(state, [(pk, lane, new[i]) for i, (pk, lane, _) in enumerate(batch)])
    )
    assert await pg_store.read(lambda r: r.reindex_remaining(mark)) == 1
    again = await pg_store.write(lambda w: w.reindex_begin("smaller-model", DIM // 2))  # resumes
    assert again.last_rowid == mark
    rest = await pg_store.read(lambda r: r.reindex_batch(mark, 10))
    await pg_store.write(lambda w: w.reindex_write(again, [(rest[0][0], rest[0][1], new[2])]))
    assert await pg_store.write(lambda w: w.reindex_finish(again)) == (3, 0)
    assert await pg_store.read(lambda r: r.vector_model()) == ("smaller-model", DIM // 2)
    search = await pg_store.read(lambda r: r.vector_search(made[0].lane))
    for memory, vector in zip(made, new):
        ((best, *_),) = search(vector[None, :], 3)
        assert best.pk == memory.pk
    problems, counts = await pg_store.read(lambda r: r.check())
    assert [p for p in problems if p.severity == "error"] == [] and counts.vectors == 3
