"""MergeGuard and the merge plan: whatever the LLM returns, nothing load-bearing is lost."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwal_mcp.curation.merge_guard import append_body, check_merge, check_skip, content_words, load_bearing_tokens
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
        "https://example.com/docs?id=7",
        "ops@example.org",
        "2026-05-01",
        "march 3rd, 2025",
        "03/04/2025",
        "v2.3.1",
        "42 ms",
        "30%",
        "$40",
        "/etc/nginx/nginx.conf",
        "os.path.join",
        "fetchuser",
        "max_retries",
        "dead-letter-queue",
        "max_conn",
        "`make test`",
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


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    target=_body,
    proposal=_body,
    reply=st.one_of(st.none(), st.text(max_size=300), _body),
    action=st.sampled_from(["update", "consolidate"]),
)
def test_whatever_the_llm_returns_every_source_token_stays_retrievable(target, proposal, reply, action):
    nominee = Nominee(1, "m_x", target, 0.9)
    plan = plan_outcome(proposal, LLMDecision(action, (nominee,), reply), 65536)  # type: ignore[arg-type]
    assert plan.body is not None
    # What history keeps: the new body, the previous body (revision), the proposal (journal).
    retrievable = " ".join([plan.body, target, proposal]).casefold()
    for token in load_bearing_tokens(target) | load_bearing_tokens(proposal):
        assert token in retrievable
    if plan.decision == "appended":
        assert target in plan.body and proposal in plan.body
    else:
        result = check_merge([target, proposal], plan.body)
        assert result.passed and result.retention == 1.0 and result.length_ratio >= 0.6


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(sources=st.lists(_body, min_size=1, max_size=4))
def test_a_body_that_contains_every_source_always_passes(sources):
    assert check_merge(sources, "\n".join(sources)).passed


# --- every token, every time (no retention below 100 %) ---------------------------------

TWENTY = (
    "Prod DB is db.internal:5432 (PostgreSQL 16.2), backups at 02:00 UTC to s3://backups/prod, "
    "retention 30 days, owner ops@example.org, runbook /srv/runbooks/db.md, config PGBOUNCER_POOL, "
    "pool_size 20, max-connections 200, client asyncpg v0.29.0, since 2026-03-02, alerts via pagerDuty, "
    "dashboard grafana.example.com, `pg_dump -Fc`, replica in eu-west-1, 8 vCPU"
)


def test_a_merge_that_drops_one_token_of_twenty_is_refused():
    tokens = load_bearing_tokens(TWENTY)
    assert len(tokens) >= 20 and "5432" in tokens
    merged = TWENTY.replace(":5432", "")  # 95 % of the tokens kept: the port is gone
    result = check_merge([TWENTY], merged)
    assert not result.passed and result.missing_tokens == ("5432",)
    assert check_merge([TWENTY], TWENTY).passed


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("Postgres listens on db.internal:5432", "5432"),
        ("Postgres listens on localhost:5432", "5432"),
        ("Upgrade to v1.2.3-rc1 next", "v1.2.3-rc1"),
        ("Build 1.0-SNAPSHOT is broken", "1.0-snapshot"),
        ("The lease renews every 45s", "45s"),
        ("Uploads are capped at 1.5 gb", "1.5 gb"),
        ("The launch is due March 2025", "march 2025"),
        ("The launch is due March 3", "march 3"),
        ("The launch is due on the 3rd of March", "3rd of march"),
        ("The launch is due 3 March 2025", "3 march 2025"),
        ("Standup is at 9:30 every weekday", "9:30"),
        ("The office closes at 5pm", "5pm"),
        ("The config is in (/etc/memwal/config.toml)", "/etc/memwal/config.toml"),
        ("The entry point is src/memwal/main.py", "src/memwal/main.py"),
        ("Streamable HTTP is served at /mcp", "/mcp"),
        ("Notes live in ~/.config/notes", "~/.config/notes"),
        (r"The binary is C:\Program Files\Memwal\memwal.exe now", r"c:\program files\memwal\memwal.exe"),
        ("The database URL is postgresql://app:pw@db:5432/app", "postgresql://app:pw@db:5432/app"),
        ("Clone git@github.com:org/repo.git first", "git@github.com:org/repo.git"),
        ("Uses XMLHttpRequest for uploads", "xmlhttprequest"),
        ("Login goes through OAuth2", "oauth2"),
        ("Data stays in the EU region", "eu"),
        ("Artifacts go to S3", "s3"),
        ("Scripts need python3", "python3"),
        ("The cluster runs k8s", "k8s"),
        ("The secret manager is 1password", "1password"),
    ],
)
def test_the_extractor_sees_every_class(text, token):
    assert token in load_bearing_tokens(text)
    assert not check_merge([text], text.replace(text[text.casefold().index(token) :][: len(token)], "")).passed


def test_abbreviations_are_not_identifiers():
    assert load_bearing_tokens("Use a cache, e.g. redis, i.e. in memory") == set()


def test_a_merge_that_drops_a_content_word_is_refused():
    target = "User prefers dark roast coffee"
    proposal = "User prefers dark roast coffee in the morning only"
    result = check_merge([target, proposal], "User prefers dark roast coffee, always")
    assert not result.passed and set(result.missing_words) == {"morning", "only"}
    assert check_merge([target, proposal], "The user prefers dark roast coffee, but only in the mornings").passed


# Random bodies: words and load-bearing tokens of every class, the pieces kept apart by
# separators so that each planted token is one thing to delete.
_low = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=7)
_cap = _low.map(str.capitalize)
_up = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=5)
_n = st.integers(0, 99999).map(str)
_small = st.integers(0, 30)
_month = st.sampled_from(["January", "Feb", "March", "Apr", "June", "Jul", "August", "Sept", "October", "Dec"])
_day = st.integers(1, 28)
_year = st.integers(1990, 2040)
_unit = st.sampled_from(["ms", "s", "gb", "kb", "min", "hours", "days", "users", "%", "mib", "x", "rpm"])


def _one(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, list[str]]]:
    return strategy.map(lambda text: (text, [text]))


_planted = st.one_of(
    _one(
        st.builds(
            lambda scheme, host, port, path: f"{scheme}://{host}.example.com{port}/{path}",
            st.sampled_from(["https", "http", "postgresql", "redis", "s3", "ftp"]),
            _low,
            st.sampled_from(["", ":5432", ":8080"]),
            _low,
        )
    ),
    _one(st.builds(lambda a, b, host: f"{a}.{b}@{host}.org", _low, _low, _low)),
    _one(st.dates().map(lambda d: d.isoformat())),
    _one(st.builds(lambda m, d, y: f"{m:02d}/{d:02d}/{y}", st.integers(1, 12), _day, _year)),
    _one(st.builds(lambda m, d, y: f"{m} {d}, {y}", _month, _day, _year)),
    _one(st.builds(lambda m, d, y: f"{d} {m} {y}", _month, _day, _year)),
    _one(st.builds(lambda m, y: f"{m} {y}", _month, _year)),
    _one(st.builds(lambda m, d: f"{m} {d}", _month, _day)),
    _one(st.builds(lambda h, m: f"{h}:{m:02d}", st.integers(0, 23), st.integers(0, 59))),
    _one(st.builds(lambda h, half: f"{h}{half}", st.integers(1, 12), st.sampled_from(["am", "pm"]))),
    _one(st.builds(lambda a, b, c: f"v{a}.{b}.{c}", _small, _small, _small)),
    _one(st.builds(lambda a, b, c: f"{a}.{b}.{c}", _small, _small, _small)),
    _one(st.builds(lambda a, b, c, n: f"v{a}.{b}.{c}-rc{n}", _small, _small, _small, _small)),
    _one(_n),
    _one(st.builds(lambda a, b: f"{a}.{b}", _n, _n)),
    _one(st.builds(lambda n, space, unit: f"{n}{space}{unit}", _n, st.sampled_from(["", " "]), _unit)),
    _one(st.builds(lambda sign, n: f"{sign}{n}", st.sampled_from(["$", "€", "-"]), _n)),
    st.builds(lambda host, port: (f"{host}.internal:{port}", [f"{host}.internal", port]), _low, _n),
    st.builds(lambda host, port: (f"{host}:{port}", [port]), _low, _n),
    _one(st.builds(lambda a, b: f"/{a}/{b}.conf", _low, _low)),
    _one(st.builds(lambda a, b: f"~/.{a}/{b}", _low, _low)),
    _one(st.builds(lambda a, b: f"./{a}/{b}.sh", _low, _low)),
    _one(st.builds(lambda a, b, c: f"{a}/{b}/{c}.py", _low, _low, _low)),
    _one(_low.map(lambda a: f"/{a}")),
    _one(st.builds(lambda a, b: f"C:\\{a}\\{b}.exe", _cap, _low)),
    _one(st.builds(lambda a, b, c: f"{a}.{b}.{c}", _low, _low, _low)),
    _one(st.builds(lambda a, b: f"{a}{b}", _low, _cap)),  # camelCase
    _one(st.builds(lambda a, b: f"{a}{b}", _cap, _cap)),  # PascalCase
    _one(st.builds(lambda a, b: f"{a}{b}", _up, _cap)),  # XMLParser
    _one(st.builds(lambda a, b: f"{a}_{b}", _low, _low)),
    _one(st.builds(lambda a, b: f"{a}_{b}", _up, _up)),
    _one(st.builds(lambda a, b, c: f"{a}-{b}-{c}", _low, _low, _low)),
    _one(_up),
    _one(st.builds(lambda a, n: f"{a}{n}", _low, st.integers(0, 99))),  # python3
    _one(st.builds(lambda a, n, b: f"{a}{n}{b}", _low, st.integers(0, 99), _low)),  # k8s
    _one(st.builds(lambda a, b: f"`{a} {b}`", _low, _low)),
)
_plain = st.sampled_from(
    [
        "user",
        "prefers",
        "the",
        "deploy",
        "runs",
        "on",
        "fridays",
        "cache",
        "team",
        "and",
        "with",
        "server",
        "is",
        "of",
        "database",
        "backup",
        "every",
        "night",
        "in",
        "a",
        "staging",
        "lives",
        "at",
    ]
).map(lambda word: (word, []))
_pieces = st.lists(st.one_of(_plain, _planted), min_size=1, max_size=12)
_separator = st.sampled_from([" ; ", " and ", " | "])


def _assemble(pieces: list[tuple[str, list[str]]], separator: str) -> tuple[str, list[str]]:
    return separator.join(text for text, _ in pieces), [atom for _, atoms in pieces for atom in atoms]


def _delete(text: str, token: str) -> str:
    """Every occurrence of `token`, as the guard compares it (case-insensitive, "42 ms" = "42ms"), removed."""
    pattern = r"\s?".join(re.escape(part) for part in token.split(" "))
    return re.sub(pattern, " ", text, flags=re.I)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pieces=_pieces, separator=_separator)
def test_deleting_any_one_planted_token_makes_the_guard_fail(pieces, separator):
    body, atoms = _assemble(pieces, separator)
    assert check_merge([body], body).passed
    for atom in atoms:
        result = check_merge([body], _delete(body, atom))
        assert not result.passed and result.missing_tokens, (atom, body, sorted(load_bearing_tokens(body)))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(target=_pieces, proposal=_pieces, separator=_separator, action=st.sampled_from(["update", "consolidate"]))
def test_deleting_any_one_extracted_token_from_a_merge_appends_instead(target, proposal, separator, action):
    sources = [_assemble(target, separator)[0], _assemble(proposal, separator)[0]]
    merged = "\n".join(sources)
    nominee = Nominee(1, "m_x", sources[0], 0.9)
    for token in load_bearing_tokens(sources[0]) | load_bearing_tokens(sources[1]):
        lossy = _delete(merged, token)
        result = check_merge(sources, lossy)
        assert not result.passed, (token, merged)
        assert token in result.missing_tokens or not lossy.strip(), (token, merged)
        plan = plan_outcome(sources[1], LLMDecision(action, (nominee,), lossy), 65536)
        assert plan.decision == "appended" and plan.body is not None
        assert sources[0] in plan.body and sources[1] in plan.body


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(pieces=_pieces, separator=_separator)
def test_deleting_any_one_content_word_makes_the_guard_fail(pieces, separator):
    body, _ = _assemble(pieces, separator)
    for stem in content_words(body):

        def drop(match: re.Match[str]) -> str:
            return " " if stem in content_words(match.group(0)) else match.group(0)

        lossy = re.sub(r"\w+", drop, body)
        result = check_merge([body], lossy)
        assert not result.passed and (result.missing_words or not lossy.strip()), (stem, body)


# --- SKIP: the target must already say everything the proposal says -----------------


def _skip(proposal: str, target: str):
    return plan_outcome(proposal, LLMDecision("skip", (Nominee(1, "m_x", target, 0.9),), None), 65536)


def test_a_skip_that_would_hide_words_is_created_instead():
    plan = _skip("User prefers dark roast coffee in the morning only", "User prefers dark roast coffee")
    assert plan.kind == "create" and plan.decision == "created"
    assert "curation_guard_skip_refused" in plan.markers and "curation_llm_decision_skip" in plan.markers
    assert "morning" in plan.reason


@pytest.mark.parametrize(
    ("proposal", "target"),
    [
        ("User does not like coffee", "User likes coffee"),
        ("User doesn't like coffee", "User likes coffee"),
        ("User never drinks coffee", "User drinks coffee"),
        ("Postgres listens on db.internal:5432", "Postgres listens on db.internal"),
        ("User prefers only dark roast coffee", "User prefers dark roast coffee"),
    ],
)
def test_a_skip_that_would_hide_a_negation_a_qualifier_or_a_token_is_refused(proposal, target):
    assert _skip(proposal, target).kind == "create"


@pytest.mark.parametrize(
    ("proposal", "target"),
    [
        ("Dark roast coffee is what the user prefers", "User prefers dark roast coffee"),
        ("The user is allergic to peanuts!", "The user is allergic to peanuts"),
        ("User doesn't like coffee", "The user does not like coffee"),
        ("User prefers dark roast coffees", "The user prefers dark roast coffee"),
    ],
)
def test_a_skip_of_a_rewording_is_still_a_skip(proposal, target):
    plan = _skip(proposal, target)
    assert plan.kind == "skip" and plan.decision == "skipped" and plan.target is not None
    assert "curation_guard_skip_refused" not in plan.markers


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(pieces=_pieces, separator=_separator, extra=_planted.filter(lambda p: p[1] == [p[0]]).map(lambda p: p[0]))
def test_a_skip_holds_only_while_the_proposal_adds_nothing(pieces, separator, extra):
    target, _ = _assemble(pieces, separator)
    assert _skip(f"The {target}.", target).kind == "skip"
    if _delete(target, extra) == target:  # the target does not have it
        assert _skip(f"{target}{separator}{extra}", target).kind == "create"


# --- numbers are kept only as the same number, with their unit; no negation is added --------


@pytest.mark.parametrize(
    ("target", "proposal"),
    [
        ("The discount rate is 3.5 percent", "The discount rate is 5 percent"),
        ("The account balance is -500 EUR", "The account balance is 500 EUR"),
        ("The freezer is set to -18 C", "The freezer is set to 18 C"),
        ("The upload limit is 10 GB per file, MB quota separate", "The upload limit is 10 MB per file"),
        ("The retry budget is 3.55 s", "The retry budget is 3.5 s"),
        ("The user is not allergic to peanuts", "The user is allergic to peanuts"),
    ],
)
def test_a_skip_into_another_number_sign_unit_or_a_negation_is_refused(target, proposal):
    plan = _skip(proposal, target)
    assert plan.kind == "create" and "curation_guard_skip_refused" in plan.markers, plan


@pytest.mark.parametrize(
    ("target", "proposal", "merged"),
    [
        (
            "The upload limit is 10 MB per file",
            "The upload limit is 10 MB per file for free users",
            "The upload limit is 10 GB per file for free users (MB)",
        ),
        (
            "The user is allergic to peanuts",
            "The user is allergic to peanuts and shellfish",
            "The user is not allergic to peanuts and shellfish",
        ),
        (
            "The deploy runs on Fridays",
            "The deploy runs on Fridays at noon",
            "The deploy never runs on Fridays at noon",
        ),
        ("The user likes tea", "The user likes green tea", "The user doesn't like green tea"),
        (
            "The account balance is 500 EUR",
            "The account balance is 500 EUR today",
            "The account balance is -500 EUR today",
        ),
    ],
)
def test_an_update_that_changes_a_number_or_adds_a_negation_is_appended(target, proposal, merged):
    plan = plan_outcome(proposal, LLMDecision("update", (Nominee(1, "m_x", target, 0.9),), merged), 65536)
    assert plan.decision == "appended" and plan.body == append_body(target, proposal), plan


def test_the_same_number_with_its_unit_and_a_kept_negation_still_pass():
    assert check_merge(["Balance is -500 EUR", "Balance is -500 EUR now"], "Balance is -500 EUR (as of now)").passed
    assert check_merge(["Freezer at 18 C"], "Freezer at 18 C, checked").passed
    assert check_merge(["The user does not eat meat"], "The user doesn't eat meat at all").passed
    assert check_merge(["Runs 10-20 jobs", "Pay 5 percent"], "Runs 10-20 jobs; pay 5 percent.").passed


_amount = st.one_of(
    st.integers(0, 9999).map(str), st.tuples(st.integers(0, 999), st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}")
)
_units = ["MB", "GB", "EUR", "USD", "ms", "s", "percent", "kg"]


@settings(max_examples=200, deadline=None)
@given(amount=_amount, change=st.sampled_from(["-{}", "+{}", "1{}", "{}1", "{}.5", "3.{}", "{}0"]))
def test_a_number_is_kept_only_as_the_same_number(amount, change):
    other = change.format(amount)
    proposal = f"The limit is {amount} today"
    target = f"The limit is {other} today"
    assert not check_skip(proposal, target).passed, (proposal, target)
    assert not check_merge([proposal], target + " as before").passed, (proposal, target)
    assert check_skip(proposal, f"The limit is {amount}, today").passed


@settings(max_examples=200, deadline=None)
@given(amount=st.integers(0, 9999).map(str), units=st.permutations(_units).map(lambda u: u[:2]))
def test_a_number_and_its_unit_are_one_token(amount, units):
    kept, other = units
    proposal = f"The quota is {amount} {kept} per user"
    # Both the number and the unit appear, apart: the amount itself does not.
    target = f"The quota is {amount} {other} per user, {kept} counted separately"
    assert not check_skip(proposal, target).passed, (proposal, target)
    assert check_skip(proposal, f"The quota is {amount} {kept} per user, unchanged").passed


_plain_words = st.lists(
    st.sampled_from(["user", "prefers", "deploy", "api", "runs", "fridays", "cache", "team", "likes", "tea"]),
    min_size=2,
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(words=_plain_words, at=st.integers(0, 12), negation=st.sampled_from(["not", "never", "no", "n't", "cannot"]))
def test_a_merged_body_with_a_negation_no_source_has_is_refused(words, at, negation):
    source = " ".join(words)
    at = min(at, len(words) - 1)
    spliced = [*words[:at], words[at] + "n't" if negation == "n't" else words[at], *words[at + 1 :]]
    if negation != "n't":
        spliced.insert(at, negation)
    merged = " ".join(spliced)
    assert check_merge([source], source).passed
    assert not check_merge([source], merged).passed, merged
    assert not check_skip(source, merged).passed, merged
    assert check_merge([merged], merged + " indeed").passed  # a negation a source has is kept, not added
