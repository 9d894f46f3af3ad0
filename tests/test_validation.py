"""Bad arguments are refused with a message naming the argument, and leave the store untouched."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memwal_mcp import validation
from memwal_mcp.errors import InvalidInput
from memwal_mcp.service import MemoryService

OWNER = "local"
GOOD = "User prefers dark roast coffee"


async def stored_rows(svc: MemoryService) -> tuple[int, int]:
    """(jobs, memories) actually in the database file."""

    def count(conn: Any) -> tuple[int, int]:
        jobs = conn.execute("SELECT COUNT(*) FROM remember_jobs").fetchone()[0]
        mems = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        return jobs, mems

    return await svc.store.db.read(count)


# --- the validation module directly ----------------------------------------------


@pytest.mark.parametrize("value", ["", "   ", "\t\n \u3000"])
def test_empty_text(value: str) -> None:
    with pytest.raises(InvalidInput, match=r"^text is empty"):
        validation.text(value, 1000)


def test_text_over_limit_names_the_limit() -> None:
    with pytest.raises(InvalidInput, match=r"^text is 101 bytes; the limit is 100 bytes"):
        validation.text("a" * 101, 100)
    assert validation.text("a" * 100, 100) == "a" * 100


def test_text_limit_counts_utf8_bytes_not_characters() -> None:
    with pytest.raises(InvalidInput, match=r"text is 102 bytes; the limit is 100 bytes"):
        validation.text("é" * 51, 100)
    assert validation.text("é" * 50, 100) == "é" * 50


def test_lone_surrogate() -> None:
    with pytest.raises(InvalidInput, match=r"^text is not valid Unicode: lone surrogate U\+D800 at position 4"):
        validation.text("abc \ud800 def", 1000)


@pytest.mark.parametrize(
    ("char", "code"), [("\x00", "U+0000"), ("\x1b", "U+001B"), ("\x7f", "U+007F"), ("\x85", "U+0085")]
)
def test_control_characters(char: str, code: str) -> None:
    with pytest.raises(InvalidInput, match=rf"^text contains the control character {re.escape(code)} at position 2"):
        validation.text(f"ab{char}cd", 1000)


def test_tabs_newlines_and_line_separators_accepted() -> None:
    value = "line one\n\tline two\u2028line three\u2029"
    assert validation.text(value, 1000) == value
    assert validation.query(value, 1000) == value


# Every C0 control but tab and newline, DEL, and every C1 control; for each text argument.
REFUSED_CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]]
TEXT_ARGUMENTS: dict[str, Callable[[str], object]] = {
    "text": lambda value: validation.text(value, 1000),
    "query": lambda value: validation.query(value, 1000),
    "idempotency_key": validation.idempotency_key,
    "namespace": validation.namespace,
}


@pytest.mark.parametrize("argument", list(TEXT_ARGUMENTS))
@pytest.mark.parametrize("char", REFUSED_CONTROLS, ids=[f"U+{ord(c):04X}" for c in REFUSED_CONTROLS])
def test_every_refused_control_character_is_refused_by_name(argument: str, char: str) -> None:
    with pytest.raises(InvalidInput, match=rf"^{argument} "):
        TEXT_ARGUMENTS[argument](f"ab{char}cd")


def test_a_carriage_return_is_refused_with_the_fix() -> None:
    with pytest.raises(
        InvalidInput,
        match=r"^text contains the control character U\+000D at position 1; remove it "
        r"\(use \\n alone for line breaks\)$",
    ):
        validation.text("a\rb", 1000)


@pytest.mark.parametrize("value", ["two\nlines", "tab\there", "line\u2028separator", "para\u2029separator"])
def test_a_key_is_one_line(value: str) -> None:
    with pytest.raises(InvalidInput, match=r"^idempotency_key contains the (control character|line separator) U\+"):
        validation.idempotency_key(value)


INVISIBLE = [
    "\u200b\u200b",
    "\u202e",
    "\u200e\u200f",
    "\ufeff",
    "\u2060 \u200d",
    "\u00ad",
    "\u3164",
    "\ufe0f",
    "\U000e0041\U000e007f",
    "\u2800\u2800",
    " \u200b\n\u2028",
]


@pytest.mark.parametrize("value", INVISIBLE, ids=[ascii(v) for v in INVISIBLE])
def test_text_with_nothing_visible_is_refused_naming_the_argument(value: str) -> None:
    with pytest.raises(InvalidInput, match=r"^text has nothing visible in it .*; give the fact to remember$"):
        validation.text(value, 1000)
    with pytest.raises(InvalidInput, match=r"^query has nothing visible in it .*; say what to search for$"):
        validation.query(value, 1000)
    if not any(c in value for c in "\n\u2028 "):
        with pytest.raises(InvalidInput, match=r"^idempotency_key has nothing visible in it"):
            validation.idempotency_key(value)


@pytest.mark.parametrize("value", ["\u202eevil override", "zero\u200bwidth", "\ufeffBOM-led fact", "\u0301", "\ue000"])
def test_invisible_characters_beside_visible_ones_are_kept(value: str) -> None:
    assert validation.text(value, 1000) == value


# Letters and symbols that render blank (Hangul fillers, the blank Braille cell) are left out: they are not content.
@given(
    st.text(
        st.characters(categories=("L", "N", "P", "S"), exclude_characters="\u115f\u1160\u3164\uffa0\u2800"),
        min_size=1,
        max_size=20,
    ),
    st.text(st.sampled_from(["\u200b", "\u202e", " ", "\n", "\ufeff", "\u2060"]), max_size=5),
)
def test_any_letter_digit_punctuation_or_symbol_is_visible_content(visible: str, invisible: str) -> None:
    value = invisible + visible + invisible
    assert validation.text(value, 10_000) == value
    with pytest.raises(InvalidInput, match=r"^text (is empty|has nothing visible)"):
        validation.text(invisible or " ", 10_000)


def test_a_long_query_is_told_to_shorten_not_to_split_facts() -> None:
    with pytest.raises(InvalidInput, match=r"^query is 101 bytes; the limit is 100 bytes \(shorten the query\)$"):
        validation.query("q" * 101, 100)


@pytest.mark.parametrize("value", [123, None, b"bytes", ["a list"], 1.5])
def test_non_string_text(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^text must be a string"):
        validation.text(value, 1000)


@pytest.mark.parametrize("value", ["", " ", "has space", "-leading", "_leading", "a" * 65, "tab\there", "ünï", 5, b"x"])
def test_invalid_namespace(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^namespace .* is invalid"):
        validation.namespace(value)


@pytest.mark.parametrize("value", ["default", "a", "work.project-1:notes_2", "A" * 64, "9lives"])
def test_valid_namespace(value: str) -> None:
    assert validation.namespace(value) == value


def test_namespace_defaults() -> None:
    assert validation.namespace(None) == "default"


@pytest.mark.parametrize("value", [0, 101, -1, True, False, "5", 5.0, 2.5])
def test_invalid_limit(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^limit must be an integer from 1 to 100"):
        validation.limit(value, 5)


def test_limit_bounds_and_default() -> None:
    assert validation.limit(1, 5) == 1
    assert validation.limit(100, 5) == 100
    assert validation.limit(None, 7) == 7


@pytest.mark.parametrize("value", [-0.01, 1.01, float("nan"), float("inf"), True, "0.5"])
def test_invalid_min_score(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^min_score must be a number from 0 to 1"):
        validation.min_score(value)


async def test_a_query_is_held_to_the_same_characters_as_stored_text(service) -> None:
    """A query with characters no stored text can hold is refused, naming it, as the text would be."""
    await service.remember(OWNER, "The backup runs at midnight", wait_ms=10000)
    for query, problem in [
        ("backup\x00 midnight", r"control character U\+0000 at position 6"),
        ("\x1b[31mbackup\x1b[0m", r"control character U\+001B at position 0"),
        ("backup \ud800 midnight", r"not valid Unicode: lone surrogate U\+D800 at position 7"),
        ("backup\r\nmidnight", r"control character U\+000D at position 6"),
    ]:
        with pytest.raises(InvalidInput, match=rf"^query (is|contains the) .*{problem}"):
            await service.recall(OWNER, query, limit=1)
    assert (await service.recall(OWNER, "backup\tmidnight", limit=1)).hits[0].text == "The backup runs at midnight"


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_huge_int_min_score(value: int) -> None:
    with pytest.raises(InvalidInput, match=r"^min_score must be a number from 0 to 1"):
        validation.min_score(value)


def test_min_score_bounds() -> None:
    assert validation.min_score(0) == 0.0
    assert validation.min_score(1) == 1.0
    assert validation.min_score(None) is None


@pytest.mark.parametrize("value", [-1, 30_001, True, 1.5, "10"])
def test_invalid_wait_ms(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^wait_ms must be an integer from 0 to 30000"):
        validation.wait_ms(value)


def test_wait_ms_bounds() -> None:
    assert validation.wait_ms(None) == 0
    assert validation.wait_ms(0) == 0
    assert validation.wait_ms(30_000) == 30_000


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ([], r"^job_ids must be a non-empty list"),
        (None, r"^job_ids must be a non-empty list"),
        ("j_0123456789abcdef", r"^job_ids must be a non-empty list"),
        ([f"j_{i:016x}" for i in range(51)], r"^job_ids has 51 ids; the limit is 50"),
        ([1, 2], r"^job_ids must contain job id strings"),
        (["j_1", None], r"^job_ids must contain job id strings"),
        ([""], r"^job_ids must contain job id strings"),
        (["x" * 65], r"^job_ids must contain job id strings"),
    ],
)
def test_invalid_job_ids(value: object, pattern: str) -> None:
    with pytest.raises(InvalidInput, match=pattern):
        validation.job_ids(value)


def test_job_ids_deduplicated_in_order() -> None:
    assert validation.job_ids(["j_b", "j_a", "j_b"]) == ["j_b", "j_a"]
    assert len(validation.job_ids([f"j_{i}" for i in range(50)])) == 50


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("", r"^idempotency_key must be a non-empty string"),
        ("  ", r"^idempotency_key must be a non-empty string"),
        (42, r"^idempotency_key must be a non-empty string"),
        ("k" * 257, r"^idempotency_key is 257 characters; the limit is 256"),
        ("two\nlines", r"^idempotency_key contains the control character U\+000A"),
    ],
)
def test_invalid_idempotency_key(value: object, pattern: str) -> None:
    with pytest.raises(InvalidInput, match=pattern):
        validation.idempotency_key(value)


# --- through the real service ------------------------------------------------------

BadCall = Callable[[MemoryService], Awaitable[object]]

BAD_CALLS: dict[str, tuple[BadCall, str]] = {
    "empty text": (lambda s: s.remember(OWNER, ""), r"^text is empty"),
    "blank text": (lambda s: s.remember(OWNER, " \n\t "), r"^text is empty"),
    "text too long": (lambda s: s.remember(OWNER, "a" * 65_537), r"^text is 65537 bytes; the limit is 65536 bytes"),
    "lone surrogate": (lambda s: s.remember(OWNER, "coffee \ud800"), r"^text is not valid Unicode: .*U\+D800"),
    "NUL": (lambda s: s.remember(OWNER, "coffee\x00"), r"^text contains the control character U\+0000"),
    "ESC": (lambda s: s.remember(OWNER, "\x1b[31mred"), r"^text contains the control character U\+001B"),
    "text int": (lambda s: s.remember(OWNER, 42), r"^text must be a string"),
    "text None": (lambda s: s.remember(OWNER, None), r"^text must be a string"),
    "namespace": (lambda s: s.remember(OWNER, GOOD, namespace="no spaces allowed"), r"^namespace .* is invalid"),
    "namespace empty": (lambda s: s.remember(OWNER, GOOD, namespace=""), r"^namespace .* is invalid"),
    "remember wait_ms -1": (lambda s: s.remember(OWNER, GOOD, wait_ms=-1), r"^wait_ms must be an integer"),
    "remember wait_ms 30001": (lambda s: s.remember(OWNER, GOOD, wait_ms=30_001), r"^wait_ms must be an integer"),
    "remember wait_ms True": (lambda s: s.remember(OWNER, GOOD, wait_ms=True), r"^wait_ms must be an integer"),
    "idempotency_key": (lambda s: s.remember(OWNER, GOOD, idempotency_key=""), r"^idempotency_key must be"),
    "empty query": (lambda s: s.recall(OWNER, "  "), r"^query is empty"),
    "query too long": (lambda s: s.recall(OWNER, "q" * 4097), r"^query is 4097 bytes; the limit is 4096 bytes"),
    "query only control characters": (lambda s: s.recall(OWNER, "\x00\x1b"), r"^query contains the control character"),
    "query too long, in query words": (lambda s: s.recall(OWNER, "q" * 4097), r"\(shorten the query\)$"),
    "carriage return": (lambda s: s.remember(OWNER, "a\rb"), r"^text contains the control character U\+000D"),
    "zero-width text": (lambda s: s.remember(OWNER, "\u200b\u200b"), r"^text has nothing visible"),
    "bidi-only text": (lambda s: s.remember(OWNER, "\u202e"), r"^text has nothing visible"),
    "zero-width query": (lambda s: s.recall(OWNER, "\u200b"), r"^query has nothing visible"),
    "zero-width key": (lambda s: s.remember(OWNER, GOOD, idempotency_key="\u200b"), r"^idempotency_key has nothing"),
    "C1 control in key": (lambda s: s.remember(OWNER, GOOD, idempotency_key="k\x85"), r"^idempotency_key contains"),
    "limit 0": (lambda s: s.recall(OWNER, "coffee", limit=0), r"^limit must be an integer from 1 to 100"),
    "limit 101": (lambda s: s.recall(OWNER, "coffee", limit=101), r"^limit must be an integer from 1 to 100"),
    "limit True": (lambda s: s.recall(OWNER, "coffee", limit=True), r"^limit must be an integer from 1 to 100"),
    "limit '5'": (lambda s: s.recall(OWNER, "coffee", limit="5"), r"^limit must be an integer from 1 to 100"),
    "recall namespace": (lambda s: s.recall(OWNER, "coffee", namespace="a b"), r"^namespace .* is invalid"),
    "min_score -0.1": (lambda s: s.recall(OWNER, "coffee", min_score=-0.1), r"^min_score must be a number"),
    "min_score 1.5": (lambda s: s.recall(OWNER, "coffee", min_score=1.5), r"^min_score must be a number"),
    "job_ids empty": (lambda s: s.status(OWNER, []), r"^job_ids must be a non-empty list"),
    "job_ids 51": (
        lambda s: s.status(OWNER, [f"j_{i:016x}" for i in range(51)]),
        r"^job_ids has 51 ids; the limit is 50",
    ),
    "job_ids non-strings": (lambda s: s.status(OWNER, [1, 2, 3]), r"^job_ids must contain job id strings"),
    "status wait_ms": (lambda s: s.status(OWNER, ["j_0123456789abcdef"], wait_ms=30_001), r"^wait_ms must be"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS), ids=list(BAD_CALLS))
async def test_service_refuses_bad_input_and_stores_nothing(service: MemoryService, case: str) -> None:
    call, pattern = BAD_CALLS[case]
    with pytest.raises(InvalidInput, match=pattern):
        await call(service)
    assert await stored_rows(service) == (0, 0)


async def test_store_still_works_after_bad_input(service: MemoryService) -> None:
    for call, _ in BAD_CALLS.values():
        with pytest.raises(InvalidInput):
            await call(service)

    outcome = await service.remember(OWNER, GOOD, wait_ms=10_000)
    assert outcome.job.status == "done", outcome.job
    result = await service.recall(OWNER, "what coffee does the user like?")
    assert [h.text for h in result.hits] == [GOOD]
    assert result.hits[0].copies == 0
    # the good fact is the only thing that was ever stored
    assert await stored_rows(service) == (1, 1)
    assert (await service.stats()).queue == {"done": 1}


async def test_text_with_tabs_and_newlines_is_stored_verbatim(service: MemoryService) -> None:
    value = "Deploy checklist:\n\t1. tag the release\n\t2. push to us-east-1"
    outcome = await service.remember(OWNER, value, wait_ms=10_000)
    assert outcome.job.status == "done"
    assert outcome.job.text == value
    result = await service.recall(OWNER, "deploy checklist")
    assert result.hits and result.hits[0].text == value


async def test_text_exactly_at_limit_is_accepted(make_settings: Callable[..., Any], embedder: Any) -> None:
    settings = make_settings(limits={"max_text_bytes": 64})
    svc = MemoryService(settings, embedder=embedder)
    async with svc.running(worker=False):
        with pytest.raises(InvalidInput, match=r"the limit is 64 bytes"):
            await svc.remember(OWNER, "x" * 65)
        outcome = await svc.remember(OWNER, "x" * 64)
        assert outcome.job.status == "queued"
        assert await stored_rows(svc) == (1, 0)


# --- dates ------------------------------------------------------------------------


def _utc(value: str) -> float:
    from datetime import datetime, timezone

    return datetime.fromisoformat(value).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("until", "last_in", "first_out"),
    [
        ("2026-03-01", "2026-03-01T23:59:59.999999", "2026-03-02T00:00:00"),
        ("2026-03-01T23", "2026-03-01T23:59:59.999999", "2026-03-02T00:00:00"),
        ("2026-03-01T23:59", "2026-03-01T23:59:59.999999", "2026-03-02T00:00:00"),
        ("2026-03-01T23:59:59Z", "2026-03-01T23:59:59.999999", "2026-03-02T00:00:00"),
        ("2026-03-01T23:59:59.5", "2026-03-01T23:59:59.599999", "2026-03-01T23:59:59.600000"),
        ("2026-03-01T23:59:59.123456789", "2026-03-01T23:59:59.123456", "2026-03-01T23:59:59.123457"),
        ("2026-03-02T01:59:59+02:00", "2026-03-01T23:59:59.999999", "2026-03-02T00:00:00"),
    ],
)
def test_until_takes_in_the_whole_of_its_last_unit(until: str, last_in: str, first_out: str) -> None:
    end = validation.instant(until, "until", upper_bound=True)
    assert end is not None and _utc(last_in) <= end < _utc(first_out)


def test_since_is_exact() -> None:
    assert validation.instant("2026-03-01T23:59:59Z", "since") == _utc("2026-03-01T23:59:59")
    assert validation.instant("2026-03-02T05:30+05:30", "since") == _utc("2026-03-02T00:00:00")


@pytest.mark.parametrize("value", ["0001-01-01", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "9999-12-31"])
def test_the_calendar_ends_are_inside_it(value: str) -> None:
    for bound in (False, True):
        assert validation.instant(value, "occurred_at", upper_bound=bound) is not None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0000-12-31", "is not a date on the calendar"),
        ("2026-02-30", "is not a date on the calendar"),
        ("2026-01-01T24:00", "is not a date on the calendar"),
        ("2026-01-01T10:00+24:00", "an offset runs from -23:59 to +23:59"),
        ("0001-01-01T00:00+00:01", "outside the years 0001 to 9999 in UTC"),
        ("9999-12-31T23:59:59.999999-00:01", "outside the years 0001 to 9999 in UTC"),
        ("20260101", "is not an ISO-8601 date"),
        ("2026-W01-1", "is not an ISO-8601 date"),
        ("2026-01-01T10:00Zjunk", "is not an ISO-8601 date"),
        ("２０２６-01-01", "is not an ISO-8601 date"),
        ("2026-01-01 ", "has spaces around it"),
        ("2026-01-01\t", "contains the control character U+0009"),
        ("2026-01-01\u2028", "contains the line separator U+2028"),
    ],
)
def test_a_bad_date_is_refused_saying_why(value: str, says: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(says)) as caught:
        validation.instant(value, "since")
    assert str(caught.value).startswith("since ")


def test_an_until_before_the_since_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"^until '2026-06-01' is before since '2026-06-30'"):
        validation.period("2026-06-30", "2026-06-01")
    start, end = validation.period("2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z")
    assert start is not None and end is not None and start < end


@pytest.mark.parametrize(
    ("value", "expires"),
    [
        ("2026-12-05", "2026-12-06T00:00:00"),  # valid all of Dec 5: gone from the first instant of Dec 6
        ("2026-12-05T00:00", "2026-12-05T00:00:00"),  # a time is its exact instant
        ("2026-12-05T10:00:00.5Z", "2026-12-05T10:00:00.5"),
        ("2026-12-05T12:00:00+02:00", "2026-12-05T10:00:00"),
        ("2020-01-31", "2020-02-01T00:00:00"),  # a past expiry is accepted
        ("9999-12-31", "9999-12-31T23:59:59"),  # the calendar's last second: its end is no date
    ],
)
def test_a_date_alone_expires_at_the_end_of_that_day(value: str, expires: str) -> None:
    assert validation.expiry(value) == _utc(expires)


def test_an_expiry_is_refused_as_any_date_is() -> None:
    assert validation.expiry(None) is None
    with pytest.raises(InvalidInput, match=r"^expires_at '2026-02-30' is not a date on the calendar"):
        validation.expiry("2026-02-30")
    with pytest.raises(InvalidInput, match=r"^expires_at must be an ISO-8601 date"):
        validation.expiry(20261205)


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("2026-12-05T10:00:00.5Z", "2026-12-05T10:00:00.5+00:00"),
        ("2026-12-05T10:00:00.123Z", "2026-12-05T10:00:00.123+00:00"),
        ("2026-12-05T10:00:00.1Z", "2026-12-05T10:00:00.1+00:00"),  # 0.1 s is no exact float: no noise
        ("2026-12-05T10:00:00.9999999Z", "2026-12-05T10:00:00.999+00:00"),  # cut, never rounded up
        ("2026-12-05T10:00:00Z", "2026-12-05T10:00:00+00:00"),
        ("0001-01-01T00:00:00.25Z", "0001-01-01T00:00:00.25+00:00"),
        # Far in the future a float is coarser than a microsecond: its digits read .122, .998, .998.
        ("9999-06-15T10:00:00.123Z", "9999-06-15T10:00:00.123+00:00"),
        ("5000-06-15T10:00:00.999Z", "5000-06-15T10:00:00.999+00:00"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999+00:00"),
        ("9999-06-15T10:00:00.1239Z", "9999-06-15T10:00:00.123+00:00"),
    ],
)
def test_a_given_instant_is_shown_to_the_millisecond_without_float_noise(given: str, shown: str) -> None:
    from memwal_mcp.records import Job
    from memwal_mcp.schemas import JobOut

    at = validation.instant(given, "occurred_at")
    assert at is not None
    job = Job("j_1", "alice", "default", "A fact", None, "queued", 0, None, None, None, at, at, at, at)
    out = JobOut.of(job)
    assert (out.occurred_at, out.expires_at) == (shown, shown)
    assert out.created_at == shown[:19] + "+00:00"  # what the server stamps: to the second
    # Given back as `until`, the time shown takes in the instant.
    until = validation.instant(shown, "until", upper_bound=True)
    assert until is not None and until >= at
    since = validation.instant(shown, "since")
    assert since is not None and since <= at
