"""Counted nouns: the one rule every reply's counts go through."""

from __future__ import annotations

import pytest

from memwal_mcp.wording import agree, counted


@pytest.mark.parametrize(
    ("n", "noun", "said"),
    [
        (1, "fact", "1 fact"),
        (0, "fact", "0 facts"),
        (2, "fact", "2 facts"),
        (1, "memory", "1 memory"),
        (3, "memory", "3 memories"),
        (1, "remember job", "1 remember job"),
        (4, "remember job", "4 remember jobs"),
        (2, "duplicate copy", "2 duplicate copies"),
        (5, "more relevant memory", "5 more relevant memories"),
    ],
)
def test_counted(n: int, noun: str, said: str) -> None:
    assert counted(n, noun) == said


def test_agree() -> None:
    assert (agree(1, "was", "were"), agree(0, "was", "were"), agree(2, "is", "are")) == ("was", "were", "are")
