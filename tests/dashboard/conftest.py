"""One server and one browser for the whole browser suite (a few seconds a test, not a start-up
each); a fresh browser context (no cookies) for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

from .browser import Dashboard, launch, running_dashboard


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with running_dashboard(tmp_path_factory.mktemp("dashboard")) as running:
        yield running


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    made = browser.new_context()
    made.set_default_timeout(15_000)
    yield made
    made.close()
