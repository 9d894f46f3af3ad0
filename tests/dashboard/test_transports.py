"""The dashboard rides on both HTTP transports, beside MCP, without loosening the gate in front of MCP."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.e2e.conftest import base_env
from tests.e2e.http_helpers import serve

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
