"""The dashboard's small parts on their own: merge diffs, chart geometry, sessions, the sign-in nonce."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memwal_mcp.dashboard import chart
from memwal_mcp.dashboard.diff import Run, word_diff
from memwal_mcp.dashboard.session import IDLE_S, LIFETIME_S, SessionBook, SigninGuard

_words = st.lists(st.sampled_from(["2.4.1", "API", "at", "on", "version", " ", "\n", ",", "Ünïcode", "x"]), max_size=40)


@given(_words.map("".join), _words.map("".join))
def test_a_diff_is_both_bodies_exactly(before: str, after: str) -> None:
    runs = word_diff(before, after)
    assert "".join(r.text for r in runs if r.kind != "ins") == before
    assert "".join(r.text for r in runs if r.kind != "del") == after
    assert all(r.text for r in runs)
    assert all(a.kind != b.kind for a, b in zip(runs, runs[1:]))


def test_a_diff_marks_the_words_a_merge_changed() -> None:
    runs = word_diff("Staging API on version 2.4.1", "Staging API, version 2.5.0 (previously 2.4.1)")
    assert [(r.kind, r.text) for r in runs] == [
        ("same", "Staging API"),
        ("del", " on"),
        ("ins", ","),
        ("same", " version "),
        ("ins", "2.5.0 (previously "),
        ("same", "2.4.1"),  # a version is one word, not digits and dots
        ("ins", ")"),
    ]


def test_a_diff_of_long_bodies_goes_by_lines() -> None:
    before = "\n".join(f"line {n} word" for n in range(3000))
    after = before.replace("line 1500 word", "line 1500 changed")
    changed = [r for r in word_diff(before, after) if r.kind != "same"]
    assert changed == [Run("del", "line 1500 word\n"), Run("ins", "line 1500 changed\n")]


def test_columns_scale_to_a_round_top_and_keep_every_day() -> None:
    days = [(f"2026-11-{d:02}", v) for d, v in zip(range(1, 31), [0] * 29 + [7])]
    drawn = chart.columns(days, "per day")
    assert len(drawn.bars) == 30
    assert [t.value for t in drawn.ticks] == [0, 5, 10]  # 7 rounds up to 10
    tallest = drawn.bars[-1]
    plot = drawn.bottom - 10.0
    assert abs(tallest.height - plot * 7 / 10) < 1e-9 and tallest.y + tallest.height == drawn.bottom
    assert all(b.height == 0 for b in drawn.bars[:-1])
    assert [label for _, label in drawn.labels] == [
        "2026-11-02",
        "2026-11-09",
        "2026-11-16",
        "2026-11-23",
        "2026-11-30",
    ]


def test_rows_are_as_long_as_their_share_of_the_top() -> None:
    drawn = chart.rows([("created", 40), ("occurrence", 10)], "by kind")
    assert drawn.bars[0].width == 4 * drawn.bars[1].width
    assert drawn.bars[0].y < drawn.bars[1].y


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_ends_when_idle_and_at_its_lifetime_even_if_used() -> None:
    clock = _Clock()
    book = SessionBook(clock)
    idle = book.open("alice", frozenset({"read"}), "sha256:ab")
    busy = book.open("alice", frozenset({"read"}), "sha256:ab")
    assert idle.id != busy.id and idle.csrf != busy.csrf and idle.id != idle.csrf
    while clock.now < 1000 + LIFETIME_S - 60:
        clock.now += IDLE_S / 2
        assert book.get(busy.id) is busy
    assert book.get(idle.id) is None
    clock.now = 1000 + LIFETIME_S + 1
    assert book.get(busy.id) is None
    assert len(book) == 0


def test_a_sessions_csrf_token_is_its_own() -> None:
    book = SessionBook()
    one = book.open("alice", frozenset({"read", "write"}), None)
    other = book.open("alice", frozenset({"read", "write"}), None)
    assert one.csrf_ok(one.csrf)
    assert not one.csrf_ok(other.csrf) and not one.csrf_ok(None) and not one.csrf_ok("")


def test_the_sign_in_nonce_takes_its_own_mac_only() -> None:
    guard = SigninGuard()
    nonce, field = guard.issue()
    other_nonce, other_field = guard.issue()
    assert guard.check(nonce, field)
    assert not guard.check(nonce, other_field) and not guard.check(other_nonce, field)
    assert not SigninGuard().check(nonce, field)  # another process's key
    issued, _, rest = nonce.partition(".")
    stale = f"{int(issued) - 7200}.{rest}"
    assert not guard.check(stale, guard._mac(stale))
    assert not guard.check(None, field) and not guard.check(nonce, None)
