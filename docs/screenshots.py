"""Screenshots of every dashboard page, for the README and docs/: the browser tests' own setup
(Debian's Chromium through Playwright, `memwal-mcp serve --transport http` as a subprocess, facts
put in through the MCP tools, a scripted LLM for a merge).

    .venv/bin/python docs/screenshots.py          # writes docs/dashboard-*.png
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.async_api import async_playwright

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs"

FACTS = [
    ("User prefers dark roast coffee", "default"),
    ("user prefers dark roast coffee", "default"),
    ("User prefers dark roast coffee ", "default"),
    ("The coffee machine on floor 2 is broken until Friday", "default"),
    ("Deploys go out on Fridays from us-east-1", "work"),
    ("The on-call rotation changes every Monday at 09:00 UTC", "work"),
    ("Prod DB is db.internal:5432 (PostgreSQL 16.2)", "work"),
    ("User's daughter is called Mira and is allergic to peanuts", "family"),
    ("<script>alert('memory text is shown as text')</script>", "default"),
]
ORIGINAL = "Staging API lives at https://staging.example.com/api on version 2.4.1"
PROPOSAL = "Staging API is at https://staging.example.com/api, now version 2.5.0"
MERGED = "Staging API lives at https://staging.example.com/api, version 2.5.0 (previously 2.4.1)."
CHAT = "User: We're moving the standup to 09:30 from Monday.\nBot: Got it.\nUser: And Ana now leads the infra team."
EXTRACTED = ["The standup moves to 09:30 from Monday", "Ana leads the infra team"]


async def main() -> int:
    sys.path.insert(0, str(REPO))  # the browser tests' setup, run from any directory
    from tests.dashboard.browser import launch, running_dashboard, sign_in

    with tempfile.TemporaryDirectory() as tmp, running_dashboard(Path(tmp)) as dashboard:
        alice = dashboard.mcp["alice"]
        for text, namespace in FACTS:
            alice.remember(text, namespace)
        dashboard.plan.merge(PROPOSAL, MERGED)
        merged = alice.remember(ORIGINAL, "work")
        assert alice.remember(PROPOSAL, "work") == merged
        moved = alice.remember("The office is at Trubarjeva 12", "work")
        alice.remember("The office is at Slovenska 5 now", "work", supersedes=[moved])
        alice.remember("The spring sale ended", "default", expires_at="2026-03-31")
        dashboard.plan.extract(CHAT, EXTRACTED)
        request = alice.call("memwal_analyze", {"text": CHAT, "namespace": "work", "wait_ms": 30000})["request_id"]
        async with async_playwright() as playwright:
            browser = await launch(playwright)
            context = await browser.new_context(viewport={"width": 1100, "height": 760}, device_scale_factor=1)
            page = await context.new_page()
            await page.goto(dashboard.ui + "/signin")
            await page.screenshot(path=str(OUT / "dashboard-signin.png"))
            await page.close()
            page = await sign_in(context, dashboard, "alice")
            shots = [
                ("search", "/search?q=coffee"),
                ("browse", "/memories?expired=show&superseded=show"),
                ("memory", f"/memories/{merged}"),
                ("forget", f"/memories/{merged}/forget"),
                ("job", f"/jobs/{request}"),
                ("activity", "/activity"),
            ]
            for name, path in shots:
                await page.goto(dashboard.ui + path)
                await page.screenshot(path=str(OUT / f"dashboard-{name}.png"), full_page=True)
                print(OUT / f"dashboard-{name}.png")
            await browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
