"""max_chars: the best hits that fit, never more characters, and an exact count of the rest."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from memwal_mcp.recall.format import fit, hit_lines, recall_text
from memwal_mcp.records import Hit, RecallResult


def _hits(texts: list[str], copies: list[int]) -> list[Hit]:
    return [
        Hit(f"m_{i:016x}", text, 1.0 - i / 100, "default", 1.8e9, 1.8e9, copies=c)
        for i, (text, c) in enumerate(zip(texts, copies))
    ]


@given(
    st.lists(st.text(min_size=1, max_size=120), min_size=0, max_size=12),
    st.lists(st.integers(0, 3), min_size=12, max_size=12),
    st.integers(1, 2000),
)
def test_the_hit_lines_never_exceed_the_budget_and_the_note_counts_the_rest(texts, copies, budget) -> None:
    result = RecallResult("q", 12, "default", _hits(texts, copies))
    cut = fit(result, budget)
    assert cut.hits == result.hits[: len(cut.hits)]  # best first, none skipped
    assert cut.omitted == len(result.hits) - len(cut.hits)
    text = recall_text(cut)
    memories = "memory" if cut.omitted == 1 else "memories"
    note = f"({cut.omitted} more relevant {memories} left out by max_chars={budget}.)"
    if cut.omitted and not cut.hits:  # nothing shown: no "more", and what the best one needs
        best = len(hit_lines(1, result.hits[0], time.time()))
        assert best > budget
        assert text == (
            f"(No hit fits max_chars={budget}: the best one needs {best} characters; "
            f"{cut.omitted} relevant {memories} left out.)"
        )
    elif cut.omitted:
        assert text.endswith(note)
        shown = text[: -len(note)].rstrip("\n")
        assert len(shown) <= budget
        # The next hit would not have fit.
        following = hit_lines(len(cut.hits) + 1, result.hits[len(cut.hits)], time.time())
        assert len(shown) + (1 if cut.hits else 0) + len(following) > budget
    else:
        assert len(text) <= budget or not result.hits


def test_without_a_budget_nothing_is_cut() -> None:
    result = RecallResult("q", 5, "default", _hits(["a", "b"], [0, 0]))
    assert fit(result, None) is result and "left out" not in recall_text(result)
