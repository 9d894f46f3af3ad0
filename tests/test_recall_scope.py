"""Recall by time, across namespaces, by mode; hostile queries never raise."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwal_mcp.errors import InvalidInput
from memwal_mcp.service import MemoryService

CAMPING = ('Melanie said, "We took the kids camping at the lake."', "2023-06-10T18:00:00Z")
POTTERY = ('Melanie said, "I signed up for a pottery class on Tuesdays."', "2023-07-02T09:30:00Z")
PAINTING = ('Melanie said, "I finished painting the sunrise over the lake."', "2023-08-20T12:00:00Z")


async def _remember_dated(service: MemoryService) -> None:
    for text, when in (CAMPING, POTTERY, PAINTING):
        await service.remember("local", text, occurred_at=when, wait_ms=10000)


async def test_occurred_at_is_kept_and_shown(service: MemoryService):
    outcome = await service.remember("local", CAMPING[0], occurred_at=CAMPING[1], wait_ms=10000)
    assert outcome.job.occurred_at == pytest.approx(1686420000.0)
    result = await service.recall("local", "camping trip", limit=1)
    assert result.hits[0].occurred_at == pytest.approx(1686420000.0)
    from memwal_mcp.recall.format import recall_text

    assert "[2023-06-10]" in recall_text(result)


async def test_since_and_until_filter_on_when_it_happened(service: MemoryService):
    await _remember_dated(service)
    july = await service.recall("local", "what did Melanie do", limit=10, since="2023-07-01", until="2023-07-31")
    assert [h.text for h in july.hits] == [POTTERY[0]]
    through_june = await service.recall("local", "lake", limit=10, until="2023-06-10")  # a bare date: its whole day
    assert [h.text for h in through_june.hits] == [CAMPING[0]]
    later = await service.recall("local", "lake", limit=10, since="2023-06-11T00:00:00+00:00")
    assert CAMPING[0] not in [h.text for h in later.hits] and PAINTING[0] in [h.text for h in later.hits]


async def test_prefer_recent_breaks_ties_toward_newer_facts(service: MemoryService):
    await service.remember("local", "The team standup is at 9:00", occurred_at="2020-01-01", wait_ms=10000)
    await service.remember("local", "The team standup is at 9:30", occurred_at="2026-11-01", wait_ms=10000)
    plain = await service.recall("local", "when is the team standup", limit=2)
    recent = await service.recall("local", "when is the team standup", limit=2, prefer_recent=True)
    assert recent.hits[0].text == "The team standup is at 9:30"
    assert {h.text for h in plain.hits} == {h.text for h in recent.hits}
    old = next(h for h in recent.hits if "9:00" in h.text)
    assert old.score < next(h for h in plain.hits if "9:00" in h.text).score


async def test_equal_scores_rank_newer_facts_first(make_settings, embedder):
    """Word matches tie often (BM25 of texts of one length): the newer fact goes first, not
    whichever random memory id sorts first."""
    svc = MemoryService(make_settings(recall={"mode": "lexical"}), embedder=embedder)
    async with svc.running():
        for year in (2021, 2019, 2024, 2020, 2023):
            await svc.remember(
                "local", f"Ticket {year} is about the garage door", occurred_at=f"{year}-03-01", wait_ms=10000
            )
        hits = (await svc.recall("local", "garage door", limit=5)).hits
    assert len({h.score for h in hits}) == 1
    assert [h.text.split()[1] for h in hits] == ["2024", "2023", "2021", "2020", "2019"]


@pytest.mark.parametrize("bad", ["yesterday", "2023-13-45", "", 17])
async def test_bad_dates_are_rejected_by_name(service: MemoryService, bad):
    with pytest.raises(InvalidInput, match="^occurred_at"):
        await service.remember("local", "a fact", occurred_at=bad)
    with pytest.raises(InvalidInput, match="^since"):
        await service.recall("local", "a fact", since=bad)


async def test_star_recalls_across_the_owners_namespaces_only(service: MemoryService):
    await service.remember("local", "User prefers dark roast coffee", namespace="home", wait_ms=10000)
    await service.remember("local", "User prefers dark roast coffee", namespace="work", wait_ms=10000)
    await service.remember("local", "Office coffee machine is on floor 3", namespace="work", wait_ms=10000)
    await service.remember("someone-else", "User prefers dark roast coffee", namespace="home", wait_ms=10000)
    result = await service.recall("local", "coffee", limit=5, namespace="*")
    texts = [h.text for h in result.hits]
    assert texts.count("User prefers dark roast coffee") == 1
    assert result.hits[texts.index("User prefers dark roast coffee")].copies == 1  # the other namespace's copy
    assert "Office coffee machine is on floor 3" in texts
    assert len(texts) == 2
    assert result.namespace == "*"


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
async def test_every_mode_finds_a_named_fact_and_equal_text_scores_equal(make_settings, embedder, mode):
    svc = MemoryService(make_settings(recall={"mode": mode}, curation={"enabled": False}), embedder=embedder)
    async with svc.running():
        for text in [
            'Caroline said, "I joined the LGBTQ support group."',
            'Caroline said, "I joined the LGBTQ support group."',
            'Melanie said, "The kids love the beach."',
            "Deploys go out on Fridays",
        ]:
            await svc.remember("local", text, wait_ms=10000)
        result = await svc.recall("local", "Which group did Caroline join?", limit=3)
    assert result.hits[0].text.startswith("Caroline said")
    assert result.hits[0].copies == 1
    assert all(0.0 <= h.score <= 1.0 for h in result.hits)


_piece = st.one_of(
    st.sampled_from(
        [
            '"',
            "'",
            "*",
            ":",
            "(",
            ")",
            "^",
            "-",
            "+",
            "{",
            "}",
            "NEAR(",
            " OR ",
            " AND ",
            " NOT ",
            "body:",
            "é",
            "日本",
            "🙂",
            " ",
        ]
    ),
    st.text(min_size=1, max_size=6),
)
# The text policy's refusals of a query: control characters, lone surrogates, nothing visible.
_REFUSALS = (
    "query is empty",
    "query contains the control character",
    "query has nothing visible",
    "query is not valid Unicode",
)
_hostile = st.lists(_piece, min_size=1, max_size=12).map("".join).filter(lambda s: s.strip())


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
async def test_hostile_queries_never_raise(make_settings, embedder, mode):
    svc = MemoryService(make_settings(recall={"mode": mode, "read_your_writes_wait_ms": 0}), embedder=embedder)
    async with svc.running():
        await svc.remember("local", 'He said "NEAR" and (maybe) AND/OR: *stars*', wait_ms=10000)
        seen: list[str] = []

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(query=_hostile)
        def probe(query: str) -> None:
            seen.append(query)

        probe()
        for query in seen:
            try:
                result = await svc.recall("local", query, limit=3)
            except InvalidInput as exc:  # refused by the text policy, by name: never an FTS5 error
                assert str(exc).startswith(_REFUSALS), exc
                continue
            assert all(0.0 <= h.score <= 1.0 for h in result.hits)
        assert (await svc.recall("local", 'NEAR "and (maybe)', limit=1)).hits


async def test_a_namespace_recall_stays_in_it_even_if_the_lane_counts_drift(service: MemoryService):
    """fts.search decides how to filter lanes from lanes.live_count; a wrong count must not
    let another namespace's memory into the hits."""
    await service.remember("local", "The wiki password policy changed in March", namespace="work", wait_ms=10000)
    await service.remember("local", "Grandma's birthday is in March", namespace="home", wait_ms=10000)

    def drift(conn):
        conn.execute("UPDATE lanes SET live_count = 0 WHERE owner = 'local' AND namespace = 'home'")
        conn.execute("UPDATE lanes SET live_count = 1000 WHERE owner = 'local' AND namespace = 'work'")

    await service.store.db.write(drift)
    for mode_query in ("March", "what happens in March"):
        work = await service.recall("local", mode_query, limit=10, namespace="work")
        assert [h.namespace for h in work.hits] == ["work"], work.hits


async def test_a_window_shows_the_memory_inside_it_not_another_copy_of_its_text(service: MemoryService):
    """Two memories of one text in two namespaces, each with a repeat recorded on it. A window
    holds one memory (by its own date or a repeat on it): that memory is the hit, with its own
    id, text, namespace and date, and `copies` counts only what is in the window. The other
    memory's dates never re-date it into a window it is not in."""
    old = "Plain fact about tulips"
    new = "plain fact about TULIPS"  # the same normalized text
    a = (await service.remember("local", old, namespace="a", occurred_at="2022-02-02", wait_ms=10000)).job
    again_a = (await service.remember("local", old, namespace="a", occurred_at="2022-02-20", wait_ms=10000)).job
    b = (await service.remember("local", new, namespace="b", occurred_at="2022-03-03", wait_ms=10000)).job
    again_b = (await service.remember("local", new, namespace="b", occurred_at="2022-03-25", wait_ms=10000)).job
    assert (again_a.decision, again_a.memory_id, again_b.decision, again_b.memory_id) == (
        "occurrence",
        a.memory_id,
        "occurrence",
        b.memory_id,
    )

    async def window(**bounds: str) -> list[tuple[str, str, str, str, int]]:
        hits = (await service.recall("local", "tulips", namespace="*", **bounds)).hits
        return [(h.id, h.text, h.namespace, _day(h.occurred_at), h.copies) for h in hits]

    assert await window(until="2022-02-28") == [(a.memory_id, old, "a", "2022-02-02", 1)]
    assert await window(since="2022-03-01") == [(b.memory_id, new, "b", "2022-03-03", 1)]
    # Outside by its own date, inside by the repeat recorded on it: shown with that repeat's date.
    assert await window(since="2022-03-10") == [(b.memory_id, new, "b", "2022-03-25", 0)]
    assert await window(since="2022-02-10", until="2022-02-25") == [(a.memory_id, old, "a", "2022-02-20", 0)]
    assert await window(until="2022-01-31") == []
    assert await window(since="2022-02-21", until="2022-03-02") == []


async def test_with_curation_off_a_window_shows_the_copy_inside_it(make_settings, embedder):
    svc = MemoryService(make_settings(curation={"enabled": False}), embedder=embedder)
    texts = {"2022-02-02": "Plain fact about tulips", "2022-03-03": "plain fact about TULIPS"}
    async with svc.running():
        ids = {
            day: (await svc.remember("local", text, occurred_at=day, wait_ms=10000)).job.memory_id
            for day, text in texts.items()
        }
        for bounds, day in [({"until": "2022-02-28"}, "2022-02-02"), ({"since": "2022-03-01"}, "2022-03-03")]:
            hits = (await svc.recall("local", "tulips", **bounds)).hits
            assert [(h.id, h.text, _day(h.occurred_at), h.copies) for h in hits] == [(ids[day], texts[day], day, 0)], (
                bounds
            )


def _day(when: float | None) -> str:
    assert when is not None
    return datetime.fromtimestamp(when, tz=timezone.utc).date().isoformat()
