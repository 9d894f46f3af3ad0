"""The dashboard rides on both HTTP transports, beside MCP, without loosening the gate in front of MCP."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx2
import pytest

from tests.e2e.conftest import base_env
from tests.e2e.http_helpers import MEMWAL, free_port, serve, stop_process, wait_for_port

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("transport", ["sse", "http"])
def test_serve_mounts_the_dashboard_at_ui_and_mcp_keeps_its_own_auth(tmp_path: Path, transport: str) -> None:
    env = base_env(tmp_path, tmp_path / "memwal.db", MEMWAL_OWNER="erin")
    with serve(env, tmp_path, transport=transport) as served, httpx2.Client(base_url=served.base) as client:
        page = client.get("/ui/search")
        assert page.status_code == 200
        assert 'data-testid="owner">erin<' in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert client.get("/ui").status_code in (307, 308)  # to /ui/
        # A token sent to MCP is still checked by the gate, whatever the dashboard does.
        endpoint = "/sse" if transport == "sse" else "/mcp"
        refused = client.get(endpoint, headers={"Authorization": "Bearer mwk_wrong"})
        assert refused.status_code == 401


def test_a_token_in_a_url_is_not_written_to_the_access_log(tmp_path: Path) -> None:
    """The dashboard refuses a token in a URL; the access log (uvicorn's, on stdout) must not
    keep it either."""
    env = base_env(tmp_path, tmp_path / "memwal.db", MEMWAL_OWNER="erin", MEMWAL_LOG_LEVEL="INFO")
    secret = "mwk_" + "q" * 40
    port = free_port()
    log = tmp_path / "both.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, proc, log)
        with httpx2.Client(base_url=f"http://127.0.0.1:{port}") as client:
            assert client.get(f"/ui/signin?token={secret}").status_code == 400
            client.get(f"/ui/search?q=x&token={secret}")
            assert client.get("/ui/search").status_code == 200
    finally:
        stop_process(proc)
    written = log.read_text(encoding="utf-8", errors="replace")
    assert "/ui/search" in written  # the access log is on
    assert secret not in written
