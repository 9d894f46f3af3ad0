"""Collapse on read, say what was collapsed: collapse_duplicates and the recall reply text."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwal_mcp.normalize import norm_key, normalize_text
from memwal_mcp.recall.collapse import collapse_duplicates, group_duplicates
from memwal_mcp.recall.format import copies_note, folded_note, recall_text
from memwal_mcp.records import Hit, RecallResult
from memwal_mcp.store.records import KeyCopies


def hit(id: str, text: str, score: float, copies: int = 0, pending: bool = False) -> Hit:
    return Hit(id, text, score, "default", 1000.0, 1000.0, copies=copies, pending=pending)


def texts(hits: list[Hit]) -> list[str]:
    return [h.text for h in hits]


# --- collapse_duplicates: seed cases --------------------------------------------


def test_distinct_facts_are_untouched() -> None:
    hits = [
        hit("m1", "User prefers dark roast coffee", 0.9),
        hit("m2", "Deploys go out on Fridays from us-east-1", 0.8),
        hit("m3", "The staging database is Postgres 16", 0.7),
    ]
    assert collapse_duplicates(hits) == hits


def test_substring_facts_both_survive() -> None:
    hits = [
        hit("m1", "prefers dark roast coffee", 0.9),
        hit("m2", "prefers dark roast coffee in the morning only", 0.85),
    ]
    out = collapse_duplicates(hits)
    assert texts(out) == ["prefers dark roast coffee", "prefers dark roast coffee in the morning only"]
    assert [h.copies for h in out] == [0, 0]


def test_rank_order_is_preserved() -> None:
    hits = [
        hit("m1", "fact C", 0.9),
        hit("m2", "fact A", 0.8),
        hit("m3", "fact c", 0.7),  # duplicate of the first
        hit("m4", "fact B", 0.6),
        hit("m5", "fact a", 0.5),  # duplicate of the second
    ]
    out = collapse_duplicates(hits)
    assert [h.id for h in out] == ["m1", "m2", "m4"]
    assert [h.score for h in out] == [0.9, 0.8, 0.6]


def test_highest_scoring_copy_survives() -> None:
    hits = [
        hit("best", "User prefers dark roast coffee", 0.91),
        hit("other", "Something else entirely", 0.5),
        hit("worse", "user prefers dark roast coffee", 0.42),
        hit("worst", "USER PREFERS DARK ROAST COFFEE", 0.10),
    ]
    out = collapse_duplicates(hits)
    survivor = out[0]
    assert survivor.id == "best"
    assert survivor.score == 0.91
    assert survivor.text == "User prefers dark roast coffee"  # the survivor's own text, not a folded copy's
    assert survivor.copies == 2
    assert out[1].id == "other" and out[1].copies == 0


def test_whitespace_and_case_are_folded() -> None:
    hits = [
        hit("m1", "User prefers dark roast coffee", 0.9),
        hit("m2", "  user   PREFERS\tdark\nroast coffee ", 0.8),
        hit("m3", "ＵＳＥＲ prefers dark roast coffee", 0.7),  # fullwidth: NFKC
    ]
    out = collapse_duplicates(hits)
    assert [h.id for h in out] == ["m1"]
    assert out[0].copies == 2


def test_empty_input_gives_empty_output() -> None:
    assert collapse_duplicates([]) == []
    assert collapse_duplicates([], {"m1": 3}) == []
    assert collapse_duplicates(iter([])) == []


def test_copies_count_folded_rows_and_occurrences_of_survivor_and_folded() -> None:
    hits = [
        hit("m1", "User prefers dark roast coffee", 0.224),
        hit("m2", "user prefers dark roast coffee", 0.2),
        hit("m3", "Deploys go out on Fridays from us-east-1", 0.201),
    ]
    # m1 had the same fact restated twice at write time, the folded m2 once more
    out = collapse_duplicates(hits, {"m1": 2, "m2": 1, "m3": 0})
    # 1 folded row + 2 occurrences on the survivor + 1 occurrence on the folded row
    assert [(h.id, h.copies) for h in out] == [("m1", 4), ("m3", 0)]


def test_occurrences_alone_count_as_copies() -> None:
    out = collapse_duplicates([hit("m1", "fact", 0.5), hit("m2", "other fact", 0.4)], {"m2": 3})
    assert [(h.id, h.copies) for h in out] == [("m1", 0), ("m2", 3)]


def test_occurrences_of_ids_not_in_hits_are_ignored() -> None:
    out = collapse_duplicates([hit("m1", "fact", 0.5)], {"elsewhere": 7})
    assert out[0].copies == 0


def test_existing_copies_on_input_hits_are_carried() -> None:
    out = collapse_duplicates([hit("m1", "fact", 0.5, copies=1), hit("m2", "FACT", 0.4, copies=2)])
    assert out[0].copies == 1 + 1 + 2


def test_input_is_not_mutated() -> None:
    hits = [hit("m1", "fact", 0.5), hit("m2", "fact", 0.4)]
    before = list(hits)
    collapse_duplicates(hits, {"m1": 1})
    assert hits == before and hits[0].copies == 0


def test_collapsed_total_on_result() -> None:
    out = collapse_duplicates(
        [hit("m1", "a", 0.9), hit("m2", "A", 0.8), hit("m3", "b", 0.7), hit("m4", " b ", 0.6)], {"m3": 2}
    )
    result = RecallResult("q", 5, "default", out)
    assert result.collapsed == 1 + (1 + 2)


# --- reply format -----------------------------------------------------------------


def test_reply_format_exact() -> None:
    hits = collapse_duplicates(
        [
            hit("m1", "User prefers dark roast coffee", 0.224),
            hit("m2", "user prefers dark roast coffee", 0.21),
            hit("m3", "Deploys go out on Fridays from us-east-1", 0.201),
        ],
        {"m1": 2, "m2": 1},
    )
    text = recall_text(RecallResult("coffee", 5, "default", hits))
    assert text == (
        "1. [score=0.224] [1970-01-01] User prefers dark roast coffee\n"
        "(4 duplicate copies of the above collapsed; the same fact is stored more than once.)\n"
        "2. [score=0.201] [1970-01-01] Deploys go out on Fridays from us-east-1"
    )


def test_copies_note_wording() -> None:
    assert copies_note(4) == "(4 duplicate copies of the above collapsed; the same fact is stored more than once.)"
    assert copies_note(1) == "(1 duplicate copy of the above collapsed; the same fact is stored more than once.)"
    assert folded_note(1) == "(1 similar fact folded into the above by the curation model.)"
    assert folded_note(3) == "(3 similar facts folded into the above by the curation model.)"


# --- counts from the store ----------------------------------------------------------


def test_stored_counts_win_over_what_a_search_fetched() -> None:
    """1,200 rows of one text, of which a search fetched three: the survivor stands for all."""
    hits = [hit("m1", "fact", 0.9), hit("m2", "FACT", 0.8), hit("m3", " fact", 0.7), hit("m4", "other", 0.5)]
    stored = {norm_key("fact"): KeyCopies(rows=1200, occurrences=0, folded_by_llm=0)}
    out = collapse_duplicates(hits, stored=stored)
    assert [(h.id, h.copies, h.folded_by_llm) for h in out] == [("m1", 1199, 0), ("m4", 0, 0)]


def test_llm_folds_are_counted_apart_and_noted_apart() -> None:
    stored = {norm_key("fact"): KeyCopies(rows=1, occurrences=2, folded_by_llm=1)}
    [survivor] = collapse_duplicates([hit("m1", "fact", 0.9)], stored=stored)
    assert (survivor.copies, survivor.folded_by_llm) == (3, 1)
    text = recall_text(RecallResult("q", 5, "default", [survivor]))
    assert text.splitlines()[1:] == [copies_note(2), folded_note(1)]


def test_only_llm_folds_say_nothing_about_the_same_fact() -> None:
    stored = {norm_key("fact"): KeyCopies(rows=1, occurrences=0, folded_by_llm=2)}
    [survivor] = collapse_duplicates([hit("m1", "fact", 0.9)], stored=stored)
    text = recall_text(RecallResult("q", 5, "default", [survivor]))
    assert text.splitlines()[1:] == [folded_note(2)]
    assert "duplicate" not in text


def test_a_window_holding_only_a_folded_fact_shows_the_memory_without_inventing_copies() -> None:
    """since/until left only the SKIP-folded proposal in the window: it is the one shown."""
    stored = {norm_key("fact"): KeyCopies(rows=0, occurrences=0, folded_by_llm=1)}
    [survivor] = collapse_duplicates([hit("m1", "fact", 0.9)], stored=stored)
    assert (survivor.copies, survivor.folded_by_llm) == (0, 0)


def test_queued_copies_add_to_the_stored_count() -> None:
    stored = {norm_key("fact"): KeyCopies(rows=2, occurrences=1, folded_by_llm=0)}
    hits = [hit("j_1", "fact", 0.95, pending=True), hit("m1", "fact", 0.9), hit("j_2", "Fact", 0.9, pending=True)]
    [survivor] = collapse_duplicates(hits, stored=stored)
    assert survivor.id == "j_1" and survivor.copies == 2 + 1 + 2 - 1


def test_a_current_copy_is_the_one_shown_when_the_group_has_one() -> None:
    """An expired or superseded copy ranked first must not make a current fact look ended; the
    groups follow the hits they show."""
    now = 2000.0
    ended = replace(hit("m1", "fact", 0.9), expires_at=1500.0)
    replaced = replace(hit("m2", "Fact", 0.9), superseded_by="m9")
    current = hit("m3", "fact ", 0.8)
    other = hit("m4", "another fact", 0.85)
    groups = group_duplicates([ended, replaced, other, current], now)
    assert [[h.id for h in group] for group in groups.values()] == [["m4"], ["m3", "m1", "m2"]]
    # Only ended copies: the best of them is shown, marked as it is.
    assert [g[0].id for g in group_duplicates([ended, replaced], now).values()] == ["m1"]
    # Not yet expired is current; without `now`, rank alone decides.
    assert [g[0].id for g in group_duplicates([ended, current], 1000.0).values()] == ["m1"]
    assert [g[0].id for g in group_duplicates([ended, current]).values()] == ["m1"]


def test_no_note_without_copies() -> None:
    text = recall_text(RecallResult("q", 5, "default", [hit("m1", "only fact", 0.5)]))
    assert text == "1. [score=0.500] [1970-01-01] only fact"
    assert "collapsed" not in text


def test_score_rounds_to_three_decimals() -> None:
    text = recall_text(RecallResult("q", 5, "default", [hit("m1", "fact", 0.22449)]))
    assert text.startswith("1. [score=0.224] ")


def test_multiline_hit_stays_under_its_number() -> None:
    text = recall_text(RecallResult("q", 5, "default", [hit("m1", "line one\nline two", 0.5), hit("m2", "b", 0.4)]))
    lines = text.split("\n")
    assert lines == ["1. [score=0.500] [1970-01-01] line one", "   line two", "2. [score=0.400] [1970-01-01] b"]


def test_pending_hit_is_marked() -> None:
    text = recall_text(RecallResult("q", 5, "default", [hit("j_1", "just said", 0.5, pending=True)]))
    assert text == "1. [score=0.500] [1970-01-01] [pending] just said"


def test_the_date_shown_is_when_it_happened_if_known() -> None:
    dated = Hit("m1", "went camping", 0.5, "default", 1000.0, 1000.0, occurred_at=1_780_000_000.0)
    assert recall_text(RecallResult("q", 5, "default", [dated])) == "1. [score=0.500] [2026-05-28] went camping"


def test_empty_result_says_nothing_matched() -> None:
    text = recall_text(RecallResult("espresso", 5, "work", []))
    assert "espresso" in text and "work" in text
    assert not text.startswith("1.")


# --- property ---------------------------------------------------------------------

# A few base facts and cosmetic variants, so duplicates are common.
_BASES = ["dark roast coffee", "Deploy on Fridays", "dark roast coffee in the morning", "x", "X y"]


@st.composite
def hit_lists(draw: st.DrawFn) -> tuple[list[Hit], dict[str, int]]:
    n = draw(st.integers(0, 12))
    scores = sorted(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n)), reverse=True)
    hits: list[Hit] = []
    for i, score in enumerate(scores):
        base = draw(st.sampled_from(_BASES))
        form = draw(st.sampled_from(["same", "upper", "pad", "tabs", "free"]))
        if form == "upper":
            base = base.upper()
        elif form == "pad":
            base = f"  {base}\n"
        elif form == "tabs":
            base = base.replace(" ", "\t \t")
        elif form == "free":
            base = draw(st.text(max_size=6))
        hits.append(hit(f"m{i}", base, score))
    occurrences = draw(
        st.dictionaries(st.sampled_from([h.id for h in hits] or ["none"]), st.integers(0, 5), max_size=n)
    )
    return hits, occurrences


# Drawing a case is slow next to the check itself on a loaded machine (CI runs on every core): not a finding.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hit_lists())
def test_collapse_properties(case: tuple[list[Hit], dict[str, int]]) -> None:
    hits, occurrences = case
    out = collapse_duplicates(hits, occurrences)

    keys = [normalize_text(h.text) for h in out]
    assert len(keys) == len(set(keys)), "two hits with the same normalized text"

    # first-seen order: survivors are exactly the first hit of each normalized group, in input order
    first_seen: dict[str, Hit] = {}
    for h in hits:
        first_seen.setdefault(normalize_text(h.text), h)
    assert [h.id for h in out] == [h.id for h in first_seen.values()]
    assert [h.score for h in out] == [h.score for h in first_seen.values()]

    # nothing lost from the count: every input row is either a survivor or a copy
    assert sum(h.copies for h in out) + len(out) == len(hits) + sum(occurrences.get(h.id, 0) for h in hits)

    # each survivor's copies are exactly its group's other rows plus the group's occurrences
    for survivor in out:
        group = [h for h in hits if normalize_text(h.text) == normalize_text(survivor.text)]
        assert survivor.copies == len(group) - 1 + sum(occurrences.get(h.id, 0) for h in group)
