"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against `memwal-mcp
serve --transport http` as a subprocess, facts put in through the MCP tools as an agent would."""

from __future__ import annotations

import asyncio
import html
import re
import time
from datetime import datetime, timezone

import pytest
from playwright.async_api import APIResponse, BrowserContext, Dialog, Page, expect

from memwal_mcp.tokens import hash_token
from tests.e2e.http_helpers import cli, make_token

from .browser import Dashboard, running_dashboard, sign_in

pytestmark = pytest.mark.slow


async def _search(page: Page, query: str, **fields: str) -> None:
    if await page.locator("#q").count() == 0:
        await page.get_by_role("navigation").get_by_role("link", name="Search").click()
    await page.fill("#q", query)
    for name, value in fields.items():
        if name == "namespace":
            await page.select_option("#namespace", value)
        else:
            await page.fill(f"#{name}", value)
    await page.click("form[role=search] button[type=submit]")
    await page.wait_for_load_state()


def _hit(page: Page, text: str):
    return page.locator("[data-testid=hit]").filter(has=page.locator("[data-testid=hit-text]", has_text=text))


async def _said(response: APIResponse) -> str:
    """The text of a page the dashboard answered with, as a reader sees it."""
    return html.unescape(await response.text())


async def _csrf(page: Page) -> str:
    value = await page.locator("input[name=csrf]").first.get_attribute("value")
    assert value
    return value


async def test_sign_in_search_shows_scores_dates_the_collapse_note_and_opens_the_memory(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    memory = alice.remember("Alice drinks oolong tea every afternoon")
    assert alice.remember("alice drinks OOLONG tea   every afternoon") == memory
    assert alice.remember("Alice drinks oolong tea every afternoon ") == memory
    page = await sign_in(context, dashboard, "alice")
    await expect(page.get_by_test_id("owner")).to_have_text("alice")

    await _search(page, "oolong tea")
    hit = _hit(page, "oolong")
    await expect(hit).to_have_count(1)
    await expect(hit.get_by_test_id("hit-text")).to_have_text("Alice drinks oolong tea every afternoon")
    await expect(hit.get_by_test_id("collapse-note")).to_have_text(
        "(2 duplicate copies of the above collapsed; the same fact is stored more than once.)"
    )
    await expect(hit.locator(".score")).to_have_text(re.compile(r"^score 0\.\d{3}$"))
    await expect(hit.locator("time")).to_contain_text(datetime.now(timezone.utc).date().isoformat())

    await hit.get_by_role("link", name=memory).click()
    await expect(page).to_have_url(re.compile(f"/ui/memories/{memory}$"))
    await expect(page.get_by_test_id("body")).to_have_text("Alice drinks oolong tea every afternoon")
    await expect(page.get_by_test_id("occurrences")).to_have_text("2")
    await expect(page.get_by_test_id("job")).to_have_count(3)


async def test_search_filters_by_namespace_and_dates(dashboard: Dashboard, context: BrowserContext) -> None:
    alice = dashboard.mcp["alice"]
    alice.remember("The kayak trip to Lake Bled was wonderful", "travel", occurred_at="2020-05-01")
    alice.remember("The kayak paddles need new grips")
    page = await sign_in(context, dashboard, "alice")

    await _search(page, "kayak", namespace="travel")
    texts = await page.get_by_test_id("hit-text").all_inner_texts()
    assert "The kayak trip to Lake Bled was wonderful" in texts
    assert "The kayak paddles need new grips" not in texts

    await _search(page, "kayak", namespace="*", since="", until="2020-12-31")
    await expect(page.get_by_test_id("hit-text")).to_have_text(["The kayak trip to Lake Bled was wonderful"])

    await _search(page, "kayak", since="2021-01-01", until="2020-12-31")
    await expect(page.get_by_test_id("error")).to_contain_text("until '2020-12-31' is before since '2021-01-01'")


async def test_browse_pages_newest_first_and_filters(dashboard: Dashboard, context: BrowserContext) -> None:
    alice = dashboard.mcp["alice"]
    ids = [
        alice.remember(f"Garden note {n}: the {word} need water", "garden")
        for n, word in enumerate(["roses", "ferns", "tulips"])
    ]
    page = await sign_in(context, dashboard, "alice")
    await page.goto(f"{dashboard.ui}/memories?namespace=garden&limit=2")
    rows = page.get_by_test_id("memory-row")
    await expect(rows).to_have_count(2)
    await expect(rows.locator("a")).to_have_text([ids[2], ids[1]])
    await page.get_by_role("link", name="Older").click()
    await expect(page.get_by_test_id("memory-row").locator("a")).to_have_text([ids[0]])
    await page.goto(f"{dashboard.ui}/memories?namespace=garden&since=2999-01-01")
    await expect(page.get_by_test_id("no-memories")).to_be_visible()


async def test_a_merge_shows_its_diff_decision_and_guard_and_undo_brings_the_old_body_back(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    original = "Alice's staging API lives at https://staging.example.com/api on version 2.4.1"
    proposal = "Alice's staging API is at https://staging.example.com/api, now version 2.5.0"
    merged = "Alice's staging API lives at https://staging.example.com/api, version 2.5.0 (previously 2.4.1)."
    dashboard.plan.merge(proposal, merged)
    memory = alice.remember(original)
    assert alice.remember(proposal) == memory  # the scripted LLM's UPDATE, past MergeGuard

    page = await sign_in(context, dashboard, "alice")
    await page.goto(f"{dashboard.ui}/memories/{memory}")
    await expect(page.get_by_test_id("body")).to_have_text(merged)
    change = page.get_by_test_id("change")
    await expect(change).to_have_count(1)
    await expect(change.get_by_test_id("decision")).to_have_text("updated")
    await expect(change).to_contain_text("LLM scripted")
    await expect(change.get_by_test_id("guard")).to_contain_text("MergeGuard:")
    inserted = " ".join(await change.locator("ins").all_inner_texts())
    deleted = " ".join(await change.locator("del").all_inner_texts())
    assert "2.5.0" in inserted and "previously" in inserted
    assert "on" in deleted.split() and "2.5.0" not in deleted

    await page.get_by_test_id("undo").click()
    await expect(page).to_have_url(re.compile(f"/ui/memories/{memory}$"))
    await expect(page.locator(".flash")).to_contain_text(f"Undid the last change of {memory}")
    await expect(page.get_by_test_id("body")).to_have_text(original)
    await expect(page.get_by_test_id("decision").first).to_have_text("undone")
    # What the merge folded in is its own memory again, found by search.
    await _search(page, "staging API version 2.5.0")
    await expect(_hit(page, proposal)).to_have_count(1)


async def test_forget_goes_through_a_confirmation_and_the_memory_is_gone_from_search(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    text = "Alice's gym locker hint is the blue heron"
    memory = alice.remember(text)
    alice.remember(text)  # a repeat: erased with it
    page = await sign_in(context, dashboard, "alice")
    await _search(page, "gym locker heron")
    await _hit(page, "blue heron").get_by_role("link", name=memory).click()
    await page.get_by_test_id("forget").click()

    await expect(page).to_have_url(re.compile(f"/ui/memories/{memory}/forget$"))
    await expect(page.get_by_test_id("body")).to_have_text(text)
    await expect(page.get_by_test_id("erase-list")).to_contain_text("the 2 remember jobs it came from")
    await page.get_by_test_id("confirm-forget").click()

    await expect(page).to_have_url(re.compile(r"/ui/memories$"))
    await expect(page.locator(".flash").first).to_contain_text(f"Forgot {memory}: 1 memory and 2 remember jobs erased.")
    await _search(page, "gym locker heron")
    assert text not in await page.get_by_test_id("hit-text").all_inner_texts()
    assert text not in alice.recall_texts("gym locker heron")
    response = await page.goto(f"{dashboard.ui}/memories/{memory}")
    assert response is not None and response.status == 410


async def test_forgetting_a_replacement_says_what_it_superseded_comes_back_and_it_does(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    old = alice.remember("Alice parks her bike at the north rack")
    new = alice.remember("Alice parks her bike at the Qwzxplorf south rack now", supersedes=[old])
    page = await sign_in(context, dashboard, "alice")
    await page.goto(f"{dashboard.ui}/memories/{new}/forget")
    await expect(page.get_by_test_id("live-again")).to_contain_text(old)
    await page.get_by_test_id("confirm-forget").click()

    await expect(page).to_have_url(re.compile(r"/ui/memories$"))
    await expect(page.locator(".flash").nth(1)).to_contain_text(f"Live again, as it had superseded them: {old}")
    await _search(page, "bike rack")
    await expect(_hit(page, "north rack")).to_have_count(1)
    assert "Alice parks her bike at the north rack" in alice.recall_texts("bike rack")


async def test_a_memory_page_says_when_it_expires_and_that_it_has_expired(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    soon = alice.remember("The espresso flash sale ends tonight", expires_at="2999-01-01T00:00:00Z")
    gone = alice.remember("The croissant flash sale ended", expires_at="2000-01-01T00:00:00Z")
    page = await sign_in(context, dashboard, "alice")
    await page.goto(f"{dashboard.ui}/memories/{soon}")
    await expect(page.get_by_test_id("expires")).to_contain_text("2999-01-01")
    await expect(page.get_by_test_id("status")).to_have_text("live")
    await page.goto(f"{dashboard.ui}/memories/{gone}")
    await expect(page.get_by_test_id("expires")).to_contain_text("2000-01-01")
    await expect(page.get_by_test_id("status")).to_contain_text("expired")


@pytest.mark.parametrize(
    ("text", "namespace"),
    [("<script>alert(1)</script>", "hostile-script"), ("<img src=x onerror=alert(1)>", "hostile-img")],
)
async def test_memory_text_that_looks_like_html_is_shown_as_text_and_runs_nothing(
    dashboard: Dashboard, context: BrowserContext, text: str, namespace: str
) -> None:
    memory = dashboard.mcp["alice"].remember(text, namespace)
    page = await sign_in(context, dashboard, "alice")
    dialogs: list[str] = []

    async def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", dismiss)

    await _search(page, "alert", namespace=namespace)
    await expect(page.get_by_test_id("hit-text")).to_have_text([text])
    await page.goto(f"{dashboard.ui}/memories?namespace={namespace}")
    await expect(page.get_by_test_id("memory-row").locator(".text").first).to_have_text(text)
    await page.goto(f"{dashboard.ui}/memories/{memory}")
    await expect(page.get_by_test_id("body")).to_have_text(text)
    await page.goto(f"{dashboard.ui}/memories/{memory}/forget")
    await expect(page.get_by_test_id("body")).to_have_text(text)

    # The text is a text node: no element came out of it on any of those pages.
    assert await page.locator("main script, main img").count() == 0
    await page.goto(f"{dashboard.ui}/search?q=alert&namespace={namespace}")
    assert await page.locator("main script, main img").count() == 0
    assert dialogs == []


async def test_a_read_only_token_sees_but_gets_no_forget_or_undo_and_its_post_is_refused(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    memory = alice.remember("The office printer is on floor 3")
    page = await sign_in(context, dashboard, "alice_ro")
    await expect(page.locator(".who .tag")).to_have_text("read-only")
    await page.goto(f"{dashboard.ui}/memories/{memory}")
    await expect(page.get_by_test_id("body")).to_have_text("The office printer is on floor 3")
    await expect(page.get_by_test_id("forget")).to_have_count(0)
    await expect(page.get_by_test_id("undo")).to_have_count(0)

    csrf = await _csrf(page)  # a valid form token: only the scope is missing
    refused = await context.request.post(f"{dashboard.ui}/memories/{memory}/forget", form={"csrf": csrf})
    assert refused.status == 403
    assert "This token lacks the 'write' scope that this needs." in await _said(refused)
    undo = await context.request.post(f"{dashboard.ui}/memories/{memory}/undo", form={"csrf": csrf})
    assert undo.status == 403
    confirm = await page.goto(f"{dashboard.ui}/memories/{memory}/forget")
    assert confirm is not None and confirm.status == 403
    assert "The office printer is on floor 3" in alice.recall_texts("office printer floor")


async def test_another_owners_memory_id_is_404_on_every_page_and_form(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    bobs = dashboard.mcp["bob"].remember("Bob's boat is named Sea Otter")
    page = await sign_in(context, dashboard, "alice")
    csrf = await _csrf(page)
    for path in (f"/memories/{bobs}", f"/memories/{bobs}/forget"):
        response = await page.goto(dashboard.ui + path)
        assert response is not None and response.status == 404
        await expect(page.get_by_test_id("error")).to_have_text(f"no memory with id '{bobs}'")
        assert "Sea Otter" not in await page.content()
    for action in ("forget", "undo"):
        refused = await context.request.post(f"{dashboard.ui}/memories/{bobs}/{action}", form={"csrf": csrf})
        assert refused.status == 404, action
    unknown = await page.goto(f"{dashboard.ui}/memories/m_0000000000000000")
    assert unknown is not None and unknown.status == 404  # the same answer as for a memory that is not yours
    await _search(page, "boat Sea Otter")
    assert "Bob's boat is named Sea Otter" not in await page.get_by_test_id("hit-text").all_inner_texts()
    assert "Bob's boat is named Sea Otter" in dashboard.mcp["bob"].recall_texts("boat Sea Otter")


async def test_the_session_cookie_is_httponly_strict_and_not_the_token_and_forms_need_their_csrf_token(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    token = dashboard.tokens["alice"]
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    memory = dashboard.mcp["alice"].remember("The spare key is under the third flowerpot")
    page = await sign_in(context, dashboard, "alice")
    await page.goto(f"{dashboard.ui}/memories/{memory}")

    (cookie,) = [c for c in await context.cookies() if c["name"] == "memwal_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert cookie["path"] == "/ui"
    assert token not in cookie["value"] and hash_token(token).split(":")[1] not in cookie["value"]
    assert "memwal_session" not in await page.evaluate("document.cookie")
    assert urls and not any(token in url for url in urls)

    for form in ({}, {"csrf": "forged"}):
        refused = await context.request.post(f"{dashboard.ui}/memories/{memory}/forget", form=form)
        assert refused.status == 403 and "not sent from this dashboard" in await _said(refused)
    cross_site = await context.request.post(
        f"{dashboard.ui}/memories/{memory}/forget",
        form={"csrf": await _csrf(page)},
        headers={"Origin": "http://evil.example"},
    )
    assert cross_site.status == 403
    await page.reload()
    await expect(page.get_by_test_id("body")).to_have_text("The spare key is under the third flowerpot")

    in_url = await page.goto(f"{dashboard.ui}/signin?token={token}")
    assert in_url is not None and in_url.status == 400
    await expect(page.get_by_test_id("error")).to_contain_text("A token never goes in a URL")


async def test_a_wrong_token_is_refused_and_a_revoked_one_ends_its_session(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    page = await context.new_page()
    await page.goto(f"{dashboard.ui}/search")
    await expect(page).to_have_url(re.compile(r"/ui/signin$"))
    await page.fill("#token", "mwk_not-a-real-token")
    await page.click("button[type=submit]")
    await expect(page.get_by_test_id("error")).to_have_text("That token is not valid (unknown or revoked).")

    token = make_token(dashboard.env, "carol", "read,write")
    await page.fill("#token", token)
    await page.click("button[type=submit]")
    await expect(page).to_have_url(re.compile(r"/ui/search$"))
    await expect(page.get_by_test_id("owner")).to_have_text("carol")
    cli(dashboard.env, "token", "revoke", hash_token(token)[:20])
    deadline = time.monotonic() + 20  # the server caches a token's answer for a few seconds
    while not page.url.endswith("/ui/signin") and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        await page.goto(f"{dashboard.ui}/search")
    assert page.url.endswith("/ui/signin")


async def test_activity_shows_the_queue_and_charts_of_the_owners_own_jobs(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    dashboard.mcp["bob"].remember("Bob's own activity does not count for Alice")
    alice = dashboard.mcp["alice"]
    alice.remember("Activity check: the heating turns on at 6")
    page = await sign_in(context, dashboard, "alice")
    await page.get_by_role("link", name="Activity").click()
    done = page.get_by_test_id("queue").locator("tr", has_text="done").locator("td")
    assert int(await done.inner_text()) >= 1
    charts = page.locator("svg.chart")
    await expect(charts).to_have_count(2)
    await expect(charts.first.locator("rect.bar")).to_have_count(30)
    today = datetime.now(timezone.utc).date().isoformat()
    assert re.fullmatch(rf"{today}: [1-9]\d*", (await charts.first.locator("rect.bar title").last.text_content()) or "")
    await expect(charts.nth(1)).to_contain_text("created")
    await expect(page.get_by_test_id("markers")).to_have_count(0)  # server-wide figures are not a token's to see


async def test_browse_filters_by_until_and_shows_expired_and_superseded_marked_or_alone(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    ns = "browse-marks"
    early = alice.remember("The canoe club met in 2019", ns, occurred_at="2019-03-01")
    gone = alice.remember("The canoe sale ended", ns, expires_at="2000-01-01T00:00:00Z")
    old = alice.remember("The canoe is stored in shed one", ns)
    new = alice.remember("The canoe is stored in the Qwzxplorf boathouse now", ns, supersedes=[old])
    page = await sign_in(context, dashboard, "alice")
    rows = page.get_by_test_id("memory-row")

    await page.goto(f"{dashboard.ui}/memories?namespace={ns}")
    await expect(rows.locator("a")).to_have_text([new, early])  # newest first; expired and superseded left out
    await page.fill("#until", "2019-12-31")
    await page.click("form.filters button[type=submit]")
    await expect(rows.locator("a")).to_have_text([early])

    await page.fill("#until", "")
    await page.select_option("#expired", "show")
    await page.select_option("#superseded", "show")
    await page.click("form.filters button[type=submit]")
    await expect(rows).to_have_count(4)

    def row(memory: str):  # the row whose link is that memory (another's mark may name it)
        return rows.filter(has=page.locator(f"a[href$='/memories/{memory}']"))

    await expect(row(gone).get_by_test_id("expired-mark")).to_contain_text("expired 2000-01-01")
    await expect(row(old).get_by_test_id("superseded-mark")).to_have_text(f"superseded by {new}")
    await expect(row(new).get_by_test_id("superseded-mark")).to_have_count(0)
    await expect(row(new).get_by_test_id("expired-mark")).to_have_count(0)

    await page.select_option("#expired", "hide")
    await page.select_option("#superseded", "only")
    await page.click("form.filters button[type=submit]")
    await expect(rows.locator("a")).to_have_text([old])
    await page.goto(f"{dashboard.ui}/memories?namespace={ns}&expired=only&limit=1")
    await expect(rows.locator("a")).to_have_text([gone])

    # Paging keeps the filters.
    await page.goto(f"{dashboard.ui}/memories?namespace={ns}&expired=show&superseded=show&limit=2")
    await expect(rows).to_have_count(2)
    await page.get_by_role("link", name="Older").click()
    await expect(rows).to_have_count(2)
    assert "expired=show" in page.url and "superseded=show" in page.url
    await page.goto(f"{dashboard.ui}/memories?namespace={ns}&expired=maybe")
    await expect(page.get_by_test_id("error")).to_have_text("expired must be hide, show or only, got 'maybe'")


async def test_an_analyze_request_is_seen_from_its_facts_and_forgotten_through_a_confirmation(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    source = "Alice: I moved to Ljubljana last week.\nBot: Noted!\nAlice: <b>My</b> cat is called Mrvica."
    facts = ["Alice moved to Ljubljana", "Alice's cat is called Mrvica"]
    dashboard.plan.extract(source, facts)
    out = dashboard.mcp["alice"].call("memwal_analyze", {"text": source, "namespace": "analyzed", "wait_ms": 30000})
    request = out["request_id"]
    memories = [fact["memory_id"] for fact in out["facts"]]
    assert request and all(memories), out
    page = await sign_in(context, dashboard, "alice")

    await page.goto(f"{dashboard.ui}/memories/{memories[1]}")
    await page.get_by_test_id("analyze-request").click()
    await expect(page).to_have_url(re.compile(f"/ui/jobs/{request}$"))
    await expect(page.locator("h1")).to_have_text(f"Analyze request {request}")
    await expect(page.get_by_test_id("job-text")).to_have_text(source)  # as text: no <b> element
    assert await page.locator("main b").count() == 0
    await expect(page.get_by_test_id("fact").locator(".text")).to_have_text(facts)

    await page.get_by_test_id("forget").click()
    await expect(page).to_have_url(re.compile(f"/ui/jobs/{request}/forget$"))
    await expect(page.get_by_test_id("kept")).to_contain_text(
        f"The 2 facts extracted from it stay remembered: {memories[0]}, {memories[1]}"
    )
    await page.get_by_test_id("confirm-forget").click()
    await expect(page).to_have_url(re.compile(r"/ui/memories$"))
    await expect(page.locator(".flash").first).to_have_text(
        f"Forgot the source text of analyze request {request}; the 2 facts extracted from it stay remembered"
        f" ({memories[0]}, {memories[1]})."
    )
    gone = await page.goto(f"{dashboard.ui}/jobs/{request}")
    assert gone is not None and gone.status == 410
    assert "Ljubljana last week" not in await page.content()
    await _search(page, "cat Mrvica", namespace="analyzed")
    await expect(_hit(page, "Mrvica")).to_have_count(1)


async def test_a_job_page_is_the_owners_alone_and_a_read_only_token_cannot_forget_there(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    bobs = dashboard.mcp["bob"].call("memwal_remember", {"text": "Bob's locker code is 4411", "wait_ms": 30000})
    page = await sign_in(context, dashboard, "alice_ro")
    response = await page.goto(f"{dashboard.ui}/jobs/{bobs['job_id']}")
    assert response is not None and response.status == 404
    assert "4411" not in await page.content()
    mine = dashboard.mcp["alice"].call("memwal_remember", {"text": "Alice's locker is number 12", "wait_ms": 30000})
    await page.goto(f"{dashboard.ui}/jobs/{mine['job_id']}")
    await expect(page.get_by_test_id("job-memory")).to_have_text(mine["memory_id"])
    await expect(page.get_by_test_id("forget")).to_have_count(0)
    refused = await context.request.post(
        f"{dashboard.ui}/jobs/{mine['job_id']}/forget", form={"csrf": await _csrf(page)}
    )
    assert refused.status == 403


async def test_a_curated_job_s_forget_post_is_refused_as_its_page_is_and_the_memory_stays(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    filed = dashboard.mcp["alice"].call("memwal_remember", {"text": "Alice's kettle is blue", "wait_ms": 30000})
    job, memory = filed["job_id"], filed["memory_id"]
    page = await sign_in(context, dashboard, "alice")
    csrf = await _csrf(page)
    confirm = await page.goto(f"{dashboard.ui}/jobs/{job}/forget")
    assert confirm is not None and confirm.status == 409
    said = f"{job} was curated: forget memory {memory} instead, on its page."
    await expect(page.get_by_test_id("error")).to_have_text(said)
    refused = await context.request.post(f"{dashboard.ui}/jobs/{job}/forget", form={"csrf": csrf})
    assert refused.status == 409
    assert said in await _said(refused)
    kept = await page.goto(f"{dashboard.ui}/memories/{memory}")
    assert kept is not None and kept.status == 200
    assert "Alice's kettle is blue" in dashboard.mcp["alice"].recall_texts("kettle blue")


async def test_a_queued_hit_links_to_its_job_page_where_it_can_be_forgotten(
    dashboard: Dashboard, context: BrowserContext
) -> None:
    alice = dashboard.mcp["alice"]
    ns = "queued-hit"
    alice.remember("Alice's dentist is Dr. Kowalczyk on Elm Street", ns)
    proposal = "Alice's dentist Dr. Kowalczyk moved to Oak Street"
    page = await sign_in(context, dashboard, "alice")
    with dashboard.plan.hold(proposal):  # the LLM does not answer: the fact stays queued
        filed = alice.call("memwal_remember", {"text": proposal, "namespace": ns})
        await _search(page, "dentist Oak Street", namespace=ns)
        hit = _hit(page, "Oak Street")
        await expect(hit.get_by_test_id("pending")).to_have_text("queued, not curated yet")
        await hit.get_by_test_id("pending-job").click()
        await expect(page).to_have_url(re.compile(f"/ui/jobs/{filed['job_id']}$"))
        await expect(page.get_by_test_id("job-status")).to_have_text("queued")
        await expect(page.get_by_test_id("job-text")).to_have_text(proposal)
        await page.get_by_test_id("forget").click()
        await expect(page.get_by_test_id("erase-list")).to_contain_text("this queued fact")
        await page.get_by_test_id("confirm-forget").click()
        await expect(page.locator(".flash").first).to_contain_text(
            f"Forgot queued fact {filed['job_id']} before it was curated"
        )
    assert proposal not in alice.recall_texts("dentist Oak Street", ns)


async def test_too_many_sign_ins_from_one_address_get_a_one_line_429(
    tmp_path_factory: pytest.TempPathFactory, context: BrowserContext
) -> None:
    with running_dashboard(tmp_path_factory.mktemp("signin"), MEMWAL_AUTH__SIGNIN_PER_MINUTE="2") as limited:
        page = await context.new_page()
        statuses = []
        for _ in range(3):
            await page.goto(f"{limited.ui}/signin")
            await page.fill("#token", "mwk_a-guess")
            async with page.expect_response(re.compile(r"/ui/signin$")) as answer:
                await page.click("button[type=submit]")
            statuses.append((await answer.value).status)
        assert statuses == [401, 401, 429]
        await expect(page.get_by_test_id("error")).to_have_text(
            re.compile(r"^Too many sign-in attempts from this address: retry after \d+ s\.$")
        )
        # The right token is refused too until the bucket refills: the limit is on attempts.
        await page.fill("#token", limited.tokens["alice"])
        await page.click("button[type=submit]")
        await expect(page.get_by_test_id("error")).to_contain_text("Too many sign-in attempts")
