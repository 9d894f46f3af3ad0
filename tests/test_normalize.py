"""Normalized text is the one definition of "the same fact": exact match after NFKC, casefold, whitespace."""

from __future__ import annotations

import string

from hypothesis import example, given
from hypothesis import strategies as st

from memwal_mcp.normalize import norm_key, normalize_text

# Separators that must all fold into one space.
WHITESPACE = [" ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u2003", "\f", "\v"]

any_text = st.text(max_size=60)
# Words with no whitespace and no combining marks, so only the separators differ.
words = st.lists(
    st.text(alphabet=st.characters(categories=("L", "N", "P", "S")), min_size=1, max_size=8).filter(
        lambda w: not any(c.isspace() for c in w)
    ),
    min_size=1,
    max_size=6,
)
separators = st.text(alphabet=st.sampled_from(WHITESPACE), min_size=1, max_size=4)


# --- properties ---------------------------------------------------------------


@given(any_text)
@example("\u01f0")  # casefold of this decomposes (j + caron); must still be idempotent
@example("\u1e9e")  # capital sharp s -> "ss"
@example("\u00a8")  # NFKC gives space + combining diaeresis
@example("ﬁ \u2126 \u212b")  # ligature, ohm, angstrom
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


@given(any_text)
def test_normalized_text_has_no_edge_or_repeated_whitespace(text: str) -> None:
    out = normalize_text(text)
    assert out == out.strip()
    assert "  " not in out
    assert all(c == " " or not c.isspace() for c in out), repr(out)


@given(words, st.lists(separators, min_size=6, max_size=6), separators, separators)
def test_any_whitespace_between_words_folds_to_one_space(
    parts: list[str], seps: list[str], lead: str, trail: str
) -> None:
    plain = " ".join(parts)
    messy = lead + "".join(part + (seps[i] if i < len(parts) - 1 else "") for i, part in enumerate(parts)) + trail
    assert normalize_text(messy) == normalize_text(plain)


@given(st.text(alphabet=string.ascii_letters + string.digits + " .,-", max_size=60))
def test_ascii_case_is_folded(text: str) -> None:
    assert normalize_text(text.upper()) == normalize_text(text.lower()) == normalize_text(text.swapcase())


@given(st.text(alphabet=string.ascii_letters + string.digits + " ", min_size=1, max_size=40))
def test_fullwidth_ascii_equals_ascii(text: str) -> None:
    # U+FF01..U+FF5E are the fullwidth forms of U+0021..U+007E; the ideographic space is U+3000.
    fullwidth = "".join("\u3000" if c == " " else chr(ord(c) + 0xFEE0) for c in text)
    assert fullwidth != text
    assert normalize_text(fullwidth) == normalize_text(text)


def _variant(draw: st.DrawFn, text: str) -> str:
    kind = draw(st.sampled_from(["upper", "spaces", "pad", "fullwidth", "other"]))
    if kind == "upper":
        return text.upper()
    if kind == "spaces":
        return text.replace(" ", draw(separators))
    if kind == "pad":
        return draw(separators) + text + draw(separators)
    if kind == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    return draw(any_text)


@st.composite
def text_pairs(draw: st.DrawFn) -> tuple[str, str]:
    a = draw(st.one_of(any_text, st.text(alphabet=string.ascii_letters + " ", max_size=30)))
    return a, _variant(draw, a)


@given(text_pairs())
def test_norm_key_equal_iff_normalized_text_equal(pair: tuple[str, str]) -> None:
    a, b = pair
    assert (norm_key(a) == norm_key(b)) == (normalize_text(a) == normalize_text(b))


@given(any_text)
def test_norm_key_is_a_stable_hex_digest(text: str) -> None:
    key = norm_key(text)
    assert key == norm_key(normalize_text(text))
    assert len(key) == 32 and all(c in "0123456789abcdef" for c in key)


# --- concrete cases -------------------------------------------------------------


def test_longer_fact_is_a_different_fact() -> None:
    short = "prefers dark roast coffee"
    long = "prefers dark roast coffee in the morning only"
    assert normalize_text(short) != normalize_text(long)
    assert norm_key(short) != norm_key(long)


def test_near_duplicates_are_not_folded() -> None:
    # exact match only: no fuzzy, no punctuation stripping, no plural folding
    base = "User prefers dark roast coffee"
    for other in [
        "User prefers dark roast coffee.",
        "User prefers dark roast coffees",
        "User prefer dark roast coffee",
    ]:
        assert normalize_text(other) != normalize_text(base)
        assert norm_key(other) != norm_key(base)


def test_whitespace_and_case_fold() -> None:
    assert normalize_text("  User   PREFERS\tdark\n\nroast\u00a0coffee  ") == "user prefers dark roast coffee"
    assert norm_key("User prefers dark roast coffee") == norm_key(" user  prefers DARK roast coffee\n")


def test_nfkc_folds_compatibility_forms() -> None:
    assert normalize_text("ＵＳＥＲ　ｐｒｅｆｅｒｓ　ｃｏｆｆｅｅ") == "user prefers coffee"
    assert normalize_text("ﬁle") == "file"  # ligature
    assert normalize_text("Straße") == normalize_text("STRASSE")  # casefold, not lower
    assert normalize_text("\u212b") == normalize_text("\u00e5")  # angstrom sign vs a-ring
    assert normalize_text("e\u0301") == normalize_text("\u00e9")  # decomposed vs composed


def test_empty_and_blank() -> None:
    assert normalize_text("") == ""
    assert normalize_text(" \t\n\u3000 ") == ""
