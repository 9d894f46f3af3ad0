"""One server and one browser for the whole browser suite (a few seconds a test, not a start-up
each); a fresh browser context (no cookies) for every test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from playwright.async_api import Browser, BrowserContext, async_playwright

from .browser import Dashboard, launch, running_dashboard


@pytest.fixture(scope="package")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with running_dashboard(tmp_path_factory.mktemp("dashboard")) as running:
        yield running


@pytest.fixture(scope="package")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await launch(playwright)
        yield chromium
        await chromium.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    made = await browser.new_context()
    made.set_default_timeout(15_000)
    yield made
    await made.close()
