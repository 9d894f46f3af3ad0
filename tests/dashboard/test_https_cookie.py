"""Over HTTPS (a TLS proxy in front, as the README advises) the session cookie is Secure; over
plain HTTP on loopback it cannot be, or the browser would never send it back."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from memwal_mcp.dashboard import build_dashboard
from memwal_mcp.service import MemoryService
from memwal_mcp.tokens import TokenRegistry


@pytest.mark.parametrize(("scheme", "secure"), [("https", True), ("http", False)])
async def test_the_session_cookie_is_secure_exactly_over_https(
    service: MemoryService, scheme: str, secure: bool
) -> None:
    dashboard = build_dashboard(service, TokenRegistry(service.settings.auth, service.store), owner="local")
    app = Starlette(routes=[Mount("/ui", app=dashboard)])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=f"{scheme}://127.0.0.1") as client:
        page = await client.get("/ui/search")
    assert page.status_code == 200
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("memwal_session=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert ("Secure" in cookie) is secure
