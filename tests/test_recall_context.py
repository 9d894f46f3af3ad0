"""Context for conversation turns: an answer takes part of the score of the question before it.

A turn such as "Thirteen, if you can believe it!" says nothing a query can find; the question
stored just before it ("How old is your cat Pickles now?") does. In hybrid recall a memory
stored right after another of its namespace, close in time, that answers it (the earlier one
asks a question) or says little itself, is lifted towards the earlier memory's score. These
tests pin what a user relies on: the answer is found, the lift never lowers a score or passes
the question's, and it stays inside one conversation (time, namespace, an explicit date).
Real SQLite, the real model; each case is compared with the same database recalled with
`context_share = 0`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memwal_mcp.config import Settings
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.service import MemoryService

QUESTION = 'Nadia said, "How old is your cat Pickles now? She has been around forever."'
ANSWER = 'Owen said, "Thirteen, if you can believe it!"'
CHAT = [
    'Owen said, "I finally finished the watercolor of the harbour at dawn."',
    'Nadia said, "That sounds lovely. Did you use the new brushes?"',
    'Owen said, "Yes, the flat ones from the shop on Elm Street."',
    'Nadia said, "My sister just moved to Lisbon for a job in a bakery."',
    'Owen said, "The old bookshop next to my studio closed last week, sadly."',
    'Nadia said, "The neighbours have a grey cat that sleeps on our porch."',
    'Owen said, "Our old car finally broke down on the way to my parents."',
    QUESTION,
    ANSWER,
    'Nadia said, "Wow. I am training for the half marathon in October."',
    'Owen said, "My neighbour runs too, every morning before work at six."',
]
QUERY = "How old is Owen's cat Pickles?"
ASKED = CHAT.index(QUESTION) + 1  # the turns up to the question


async def _remember_chat(svc: MemoryService, turns: list[str], start: str, step_s: int, namespace: str) -> None:
    base = _epoch(start)
    ids = []
    for i, turn in enumerate(turns):
        when = _iso(base + i * step_s) if step_s >= 0 else None
        ids.append((await svc.remember("local", turn, namespace=namespace, occurred_at=when)).job.id)
    jobs = await svc.status("local", ids, wait_ms=10000)
    assert all(job.status == "done" for job in jobs), jobs


def _epoch(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


def _iso(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


async def _scores(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder, db: Path, share: float | None, namespace: str
) -> dict[str, float]:
    recall = {} if share is None else {"context_share": share}
    svc = MemoryService(make_settings(db_path=db, recall=recall), embedder=embedder)
    async with svc.running(worker=False):
        result = await svc.recall("local", QUERY, limit=len(CHAT), namespace=namespace)
    return {hit.text: hit.score for hit in result.hits}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memwal.db"


async def _loaded(make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder, db: Path, **chats) -> None:
    svc = MemoryService(make_settings(db_path=db), embedder=embedder)
    async with svc.running():
        for namespace, (turns, start, step_s) in chats.items():
            await _remember_chat(svc, turns, start, step_s, namespace)


async def test_an_answer_is_found_through_the_question_before_it(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder, db: Path
) -> None:
    await _loaded(make_settings, embedder, db, chat=(CHAT, "2023-01-08T19:30:00+00:00", 60))
    plain = await _scores(make_settings, embedder, db, 0.0, "chat")
    lifted = await _scores(make_settings, embedder, db, None, "chat")  # the default
    ranked = sorted(lifted, key=lambda text: -lifted[text])
    assert ranked.index(ANSWER) <= 2, ranked  # the answer is among the first three
    unlifted = sorted(plain, key=lambda text: -plain[text])
    assert ANSWER not in unlifted[:3], unlifted  # alone it shares only a name with the query
    assert plain[ANSWER] < lifted[ANSWER] <= lifted[QUESTION]
    for text, score in lifted.items():  # a lift never lowers a score, and scores stay in [0, 1]
        assert 0.0 <= score <= 1.0
        assert score >= plain.get(text, 0.0) - 1e-9


async def test_context_stays_inside_one_conversation(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder, db: Path
) -> None:
    """A day between the question and the answer, no dates at all, or the question in
    another namespace: the answer is scored on its own."""
    await _loaded(
        make_settings,
        embedder,
        db,
        apart=(CHAT, "2023-01-08T19:30:00+00:00", 86400),  # one turn a day
        undated=(CHAT, "2023-01-08T19:30:00+00:00", -1),
        asked=(CHAT[:ASKED], "2023-01-08T19:30:00+00:00", 60),
        answered=(CHAT[ASKED:], "2023-01-08T19:40:00+00:00", 60),
    )
    for namespace in ("apart", "undated", "answered"):
        plain = await _scores(make_settings, embedder, db, 0.0, namespace)
        lifted = await _scores(make_settings, embedder, db, None, namespace)
        assert lifted[ANSWER] == pytest.approx(plain[ANSWER], abs=1e-9), namespace
        if namespace != "answered":  # there the answer is the first turn; others may lean on it
            assert lifted == pytest.approx(plain, abs=1e-9), namespace


async def test_a_long_statement_after_a_statement_keeps_its_own_score(
    make_settings: Callable[..., Settings], embedder: FastEmbedEmbedder, db: Path
) -> None:
    """Only an answer, or a turn that says little, borrows: a turn that states enough on its
    own after a turn that asks nothing is what it is."""
    statement = 'Nadia said, "Pickles the cat slept all afternoon on the warm windowsill in the kitchen again."'
    long_turn = (
        'Owen said, "We repainted the garden shed green, fixed the fence, planted tomatoes, '
        'basil and peppers, and cleaned out the gutters before the storm."'
    )
    await _loaded(make_settings, embedder, db, chat=([statement, long_turn], "2023-01-08T19:30:00+00:00", 60))
    plain = await _scores(make_settings, embedder, db, 0.0, "chat")
    lifted = await _scores(make_settings, embedder, db, None, "chat")
    assert lifted[long_turn] == pytest.approx(plain[long_turn], abs=1e-9)
    assert lifted[statement] == pytest.approx(plain[statement], abs=1e-9)
