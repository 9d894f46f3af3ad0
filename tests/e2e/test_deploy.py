"""deploy/: the compose file says what it should, and its nginx.conf, run by a real nginx in front of
two real replicas, carries the real `mcp` client's session across them, one replica killed midway."""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest
import yaml
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from memwal_mcp.cli import build_parser
from memwal_mcp.config import Settings

from .conftest import CALL_TIMEOUT_S, free_port, tool_text
from .http_helpers import make_token, serve

pytestmark = pytest.mark.slow

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_the_compose_file_runs_three_stateless_replicas_on_postgres_behind_the_balancer() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    memwal = services["memwal"]
    assert memwal["deploy"]["replicas"] == 3
    assert memwal["environment"]["MEMWAL_DB_URL"].startswith("postgresql://memwal:")
    assert "@postgres:5432/memwal" in memwal["environment"]["MEMWAL_DB_URL"]
    assert memwal["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "/healthz" in " ".join(memwal["healthcheck"]["test"])
    # The command is one this memwal-mcp accepts, and serves every request on any replica.
    command = memwal["command"]
    assert command[0] == "memwal-mcp"
    args = build_parser().parse_args(command[1:])
    assert (args.transport, args.host, args.stateless) == ("http", "0.0.0.0", True)
    # X-Forwarded-For is believed from nginx's fixed address alone (issue 21), in a form the settings take.
    balancer_ip = services["balancer"]["networks"]["default"]["ipv4_address"]
    trusted = memwal["environment"]["MEMWAL_SERVER__FORWARDED_ALLOW_IPS"]
    assert Settings.model_validate(
        {"server": {"forwarded_allow_ips": json.loads(trusted)}}
    ).server.forwarded_allow_ips == [balancer_ip]
    subnet = compose["networks"]["default"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(balancer_ip) in ipaddress.ip_network(subnet)
    assert services["postgres"]["image"].startswith("pgvector/pgvector:pg16")
    balancer = services["balancer"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in balancer["volumes"]
    assert balancer["depends_on"]["memwal"]["condition"] == "service_healthy"
    assert (DEPLOY / "README.md").is_file()


def _nginx_conf(listen: int, backends: list[str], folder: Path) -> Path:
    """deploy/nginx.conf as shipped, but for this machine: our port, our replicas, files in `folder`."""
    text = (DEPLOY / "nginx.conf").read_text()
    text, listens = re.subn(r"listen 8765;", f"listen 127.0.0.1:{listen};", text)
    servers = "\n".join(f"        server {b.removeprefix('http://')} max_fails=1 fail_timeout=5s;" for b in backends)
    text, upstreams = re.subn(r"^\s*server memwal:8765\b[^\n]*$", servers, text, flags=re.M)
    # One upstream for MCP (round robin), one for the dashboard (pinned by client address).
    assert (listens, upstreams) == (1, 2), "deploy/nginx.conf no longer has the lines this test adapts"
    text = text.replace("events {", f"pid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\nevents {{", 1)
    conf = folder / "nginx.conf"
    conf.write_text(text)
    return conf


def _dashboard_pages(base: str, token: str, pages: int) -> list[int]:
    """Sign in to the dashboard through the balancer as a browser would, then open Browse
    `pages` times: the statuses of the sign-in and of each page (303 would be "sign in again")."""
    with httpx2.Client(base_url=base, timeout=CALL_TIMEOUT_S, follow_redirects=False) as browser:
        form = browser.get("/ui/signin")
        assert form.status_code == 200, form.text[:500]
        nonce = re.search(r'name="signin" value="([^"]+)"', form.text)
        assert nonce is not None, form.text[:500]
        signed_in = browser.post(
            "/ui/signin", data={"token": token, "signin": nonce.group(1)}, headers={"Origin": base}
        )
        statuses = [signed_in.status_code]
        for _ in range(pages):
            page = browser.get("/ui/memories")
            statuses.append(page.status_code)
        return statuses


async def _through(url: str, token: str, kill_after_first: subprocess.Popen[bytes]) -> list[str]:
    with anyio.fail_after(120):
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                    await session.initialize()
                    replies = []
                    texts = ["The VPN gateway is vpn-3.corp", "Backups run at 02:00 UTC", "The build cache is on s3"]
                    for n, text in enumerate(texts):
                        result = await session.call_tool("memwal_remember", {"text": text, "wait_ms": 5000})
                        assert not result.is_error, tool_text(result)
                        if n == 0:
                            kill_after_first.kill()  # a replica dies under the balancer
                            kill_after_first.wait(10)
                    for query in ("which VPN gateway?", "when do backups run?", "where is the build cache?"):
                        result = await session.call_tool("memwal_recall", {"query": query, "limit": 1})
                        assert not result.is_error, tool_text(result)
                        replies.append(tool_text(result))
                    return replies


def test_the_shipped_nginx_conf_spreads_one_client_over_replicas_and_survives_one_dying(
    server_env, tmp_path: Path
) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is needed (apt-get install -y nginx-light; .ci/run installs it)"
    env = server_env()
    token = make_token(env, "alice")
    with (
        serve(env, tmp_path, name="a", extra=("--stateless",)) as a,
        serve(env, tmp_path, name="b", extra=("--stateless",)) as b,
    ):
        port = free_port()
        folder = tmp_path / "nginx"
        folder.mkdir()
        conf = _nginx_conf(port, [a.base, b.base], folder)
        balancer = subprocess.Popen(
            [nginx, "-p", str(folder), "-c", str(conf), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 15
            while True:
                try:
                    if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                assert balancer.poll() is None, balancer.stderr.read() if balancer.stderr else ""
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.1)
            # The dashboard's sessions and sign-in forms live in the replica that made them: the
            # shipped conf pins /ui to one replica per client, so signing in and browsing hold.
            pages = _dashboard_pages(f"http://127.0.0.1:{port}", token, 6)
            replies = anyio.run(_through, f"http://127.0.0.1:{port}/mcp", token, b.proc)
        finally:
            balancer.terminate()
            balancer.wait(10)
    assert pages == [303] + [200] * 6, pages
    assert "vpn-3.corp" in replies[0]
    assert "02:00 UTC" in replies[1]
    assert "s3" in replies[2]
    assert "Traceback" not in a.log_text(), a.log_text()[-3000:]
