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


def test_analyze_notes_have_one_pair_of_brackets_and_refusals_one_a_line() -> None:
    from memwal_mcp.schemas import AnalyzeOut, analyze_text

    out = AnalyzeOut(
        extraction_failed=False,
        request_id="j_1",
        facts=[],
        left_out=5,
        refused=2,
        refusals=["fact 7 is empty; the LLM gave no text", "fact 8 is a number, not a text"],
        repeated=1,
    )
    assert analyze_text(out).splitlines()[1:] == [
        "(5 more facts were left out: at most 50 are kept per call.)",
        "(1 repeated fact was remembered once.)",
        "2 facts were refused and not remembered:",
        "  - fact 7 is empty; the LLM gave no text",
        "  - fact 8 is a number, not a text",
    ]
