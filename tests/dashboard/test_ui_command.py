"""`memwal-mcp ui`: the dashboard alone on 127.0.0.1, acting for the configured owner while no
token exists, answering only loopback names, and asking for a token once one is made."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from playwright.async_api import Browser, expect

from tests.e2e.conftest import MEMWAL, base_env, free_port, stop_process, wait_for_port
from tests.e2e.http_helpers import make_token

pytestmark = pytest.mark.slow


@pytest.fixture
def local_ui(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    env = base_env(tmp_path, tmp_path / "memwal.db", MEMWAL_OWNER="dana")
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "ui", "--no-browser", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}", env, log
    finally:
        stop_process(proc)


async def test_without_tokens_it_acts_for_the_configured_owner_on_loopback_only(
    local_ui: tuple[str, dict[str, str], Path], browser: Browser
) -> None:
    base, env, log = local_ui
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(base + "/")
        await expect(page).to_have_url(re.compile(r"/ui/search$"))
        await expect(page.get_by_test_id("owner")).to_have_text("dana")
        await expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
        await page.get_by_role("link", name="Activity").click()
        await expect(page.get_by_test_id("markers")).to_be_visible()  # the local owner's server: its markers too
    finally:
        await context.close()
    assert f"memwal dashboard at {base}/ui/ (acting for 'dana'" in log.read_text()

    # A page whose name was made to resolve to 127.0.0.1 (DNS rebinding) gets nothing.
    rebound = httpx2.get(f"{base}/ui/search", headers={"Host": "attacker.example"})
    assert rebound.status_code == 403
    assert "answers only at a loopback address" in rebound.text
    assert "memwal_session" not in rebound.headers.get("set-cookie", "")


async def test_once_a_token_exists_it_asks_for_one(
    local_ui: tuple[str, dict[str, str], Path], browser: Browser
) -> None:
    base, env, _ = local_ui
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(base + "/ui/search")
        await expect(page.get_by_test_id("owner")).to_have_text("dana")
        token = make_token(env, "dana", "read")
        deadline = time.monotonic() + 20  # the server counts tokens every few seconds
        while not page.url.endswith("/ui/signin") and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            await page.goto(base + "/ui/search")
        assert page.url.endswith("/ui/signin")
        await page.fill("#token", token)
        await page.click("button[type=submit]")
        await expect(page).to_have_url(re.compile(r"/ui/search$"))
        await expect(page.locator(".who .tag")).to_have_text("read-only")
    finally:
        await context.close()


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    env = base_env(tmp_path, tmp_path / "memwal.db")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(MEMWAL), "ui", "--no-browser", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"memwal-mcp: error: cannot listen on 127.0.0.1:{port} (Address already in use); pass another --port"
    )
