"""MergeGuard and the merge plan: whatever the LLM returns, nothing load-bearing is lost."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from memwal_mcp.curation.merge_guard import append_body, check_merge, load_bearing_tokens
from memwal_mcp.curation.plan import plan_outcome
from memwal_mcp.curation.prompt import LLMDecision, Nominee


def test_token_classes():
    text = (
        "See https://example.com/docs?id=7, mail ops@example.org by 2026-05-01 or March 3rd, 2025 "
        "(also 03/04/2025); upgrade to v2.3.1; timeout 42 ms, 30% CPU, $40; edit /etc/nginx/nginx.conf; "
        "call os.path.join, fetchUser, max_retries, dead-letter-queue, MAX_CONN and `make test`."
    )
    tokens = load_bearing_tokens(text)
    for expected in [
        "https://example.com/docs?id=7", "ops@example.org", "2026-05-01", "march 3rd, 2025", "03/04/2025",
        "v2.3.1", "42 ms", "30%", "$40", "/etc/nginx/nginx.conf", "os.path.join", "fetchuser",
        "max_retries", "dead-letter-queue", "max_conn", "`make test`",
    ]:
        assert expected in tokens, expected


def test_dropping_a_url_a_version_or_a_date_fails():
    source = "Docs at https://docs.example.com for v3.2.0, released 2026-01-15, by the platform team"
    for dropped in ["https://docs.example.com", "v3.2.0", "2026-01-15"]:
        merged = source.replace(dropped, "").replace("  ", " ")
        assert not check_merge([source], merged).passed, dropped
    assert check_merge([source], source + " (still current)").passed


def test_a_collapsed_body_fails_even_with_no_tokens():
    source = "The user likes long walks along the river in the early evening with the dog"
    assert not check_merge([source], "User likes walks").passed
    assert not check_merge([source], None).passed
    assert not check_merge([source], "   ").passed


def test_short_numbers_need_whole_token_matches():
    assert not check_merge(["runs on 3 hosts since 2023"], "runs on several hosts since 2023").passed


def test_append_is_the_documented_shape():
    assert append_body("old", "new", date(2026, 11, 30)) == "old\n\n---\n_[merged 2026-11-30]_\nnew"


_word = st.sampled_from(["user", "prefers", "the", "deploy", "api", "runs", "on", "fridays", "cache", "team"])
_token = st.one_of(
    st.integers(0, 99999).map(str),
    st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)).map(lambda t: f"v{t[0]}.{t[1]}.{t[2]}"),
    st.dates().map(lambda d: d.isoformat()),
    st.from_regex(r"[a-z]{3,8}", fullmatch=True).map(lambda s: f"https://{s}.example.com/{s}"),
    st.from_regex(r"[a-z]{2,6}_[a-z]{2,6}", fullmatch=True),
)
_body = st.lists(st.one_of(_word, _token), min_size=1, max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(target=_body, proposal=_body, reply=st.one_of(st.none(), st.text(max_size=300), _body),
       action=st.sampled_from(["update", "consolidate"]))
def test_whatever_the_llm_returns_every_source_token_stays_retrievable(target, proposal, reply, action):
    nominee = Nominee(1, "m_x", target, 0.9)
    plan = plan_outcome(proposal, LLMDecision(action, (nominee,), reply))  # type: ignore[arg-type]
    assert plan.body is not None
    # What history keeps: the new body, the previous body (revision), the proposal (journal).
    retrievable = " ".join([plan.body, target, proposal]).casefold()
    for token in load_bearing_tokens(target) | load_bearing_tokens(proposal):
        assert token in retrievable
    if plan.decision == "appended":
        assert target in plan.body and proposal in plan.body
    else:
        result = check_merge([target, proposal], plan.body)
        assert result.passed and result.retention >= 0.95 and result.length_ratio >= 0.6


@settings(max_examples=200, deadline=None)
@given(sources=st.lists(_body, min_size=1, max_size=4))
def test_a_body_that_contains_every_source_always_passes(sources):
    assert check_merge(sources, "\n".join(sources)).passed
