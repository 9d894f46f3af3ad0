"""HTTP needs a key: bearer tokens map to owners and scopes; refusals happen before any tool runs."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memwal_mcp.tokens import hash_token

from .conftest import (
    CALL_TIMEOUT_S,
    MEMWAL,
    PROTOCOL_VERSION,
    db_rows,
    free_port,
    stop_process,
    tool_text,
    wait_for_port,
)
from .http_helpers import INITIALIZE, JSON_AND_SSE, bearer, cli, initialize, make_token, serve

pytestmark = pytest.mark.slow


def _token(env: dict[str, str], owner: str, scope: str) -> str:
    made = subprocess.run(
        [str(MEMWAL), "token", "create", "--owner", owner, "--scope", scope],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("mwk_") and token not in made.stderr
    return token


@pytest.fixture
def secured(server_env, tmp_path: Path, db_path: Path) -> Iterator[tuple[str, dict[str, str], str]]:
    """A streamable-HTTP server with tokens for alice (read,write), bob (read,write) and a read-only reader;
    bob's token comes from the config (env), the others from `memwal-mcp token create`."""
    bob = "mwk_bob-from-config-0123456789"
    env = server_env(
        MEMWAL_AUTH__TOKENS=json.dumps([{"hash": hash_token(bob), "owner": "bob", "scopes": ["read", "write"]}]),
        # Every request spends from the bucket (initialize, the initialized notification, the GET stream,
        # each call): room for the few sessions a test opens, then 6 a minute.
        MEMWAL_AUTH__BURST="30",
        MEMWAL_AUTH__RATE_PER_MINUTE="6",
    )
    tokens = {"alice": _token(env, "alice", "read,write"), "reader": _token(env, "alice", "read"), "bob": bob}
    port = free_port()
    log = tmp_path / "auth-server.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(MEMWAL), "serve", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp", tokens, str(log)
    finally:
        stop_process(proc)


def _session(url: str, token: str | None):
    client = httpx2.AsyncClient(headers=bearer(token), timeout=CALL_TIMEOUT_S)
    return client, streamable_http_client(url, http_client=client)


async def _call(url: str, token: str | None, *calls: tuple[str, dict]) -> list:
    client, transport = _session(url, token)
    results = []
    async with client, transport as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
            await session.initialize()
            for name, arguments in calls:
                results.append(await session.call_tool(name, arguments))
    return results


async def test_no_token_and_a_wrong_token_get_401_before_any_tool_runs(secured):
    url, _, _ = secured
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
        missing = await client.post(url, json=initialize, headers=headers)
        wrong = await client.post(url, json=initialize, headers={**headers, "Authorization": "Bearer mwk_nope"})
    assert missing.status_code == 401 and wrong.status_code == 401
    assert "bearer" in missing.headers.get("www-authenticate", "").lower()


async def test_tokens_act_for_their_owner_and_scopes_are_enforced(secured):
    url, tokens, _ = secured
    with anyio.fail_after(90):
        (alice_says,) = await _call(
            url, tokens["alice"], ("memwal_remember", {"text": "Alice's locker code is 4417", "wait_ms": 15000})
        )
        assert not alice_says.is_error, tool_text(alice_says)
        (bob_says,) = await _call(
            url, tokens["bob"], ("memwal_remember", {"text": "Bob parks on level 2", "wait_ms": 15000})
        )
        assert not bob_says.is_error, tool_text(bob_says)

        reader_recall, reader_remember = await _call(
            url,
            tokens["reader"],
            ("memwal_recall", {"query": "locker code", "limit": 5}),
            ("memwal_remember", {"text": "The reader tries to write"}),
        )
        assert [h["text"] for h in reader_recall.structured_content["hits"]] == ["Alice's locker code is 4417"]
        assert reader_remember.is_error and "'write' scope" in tool_text(reader_remember)

        (bob_recall,) = await _call(url, tokens["bob"], ("memwal_recall", {"query": "locker code", "limit": 5}))
        assert [h["text"] for h in bob_recall.structured_content["hits"]] == ["Bob parks on level 2"]
        alice_job = alice_says.structured_content["job_id"]
        (bob_status,) = await _call(url, tokens["bob"], ("memwal_remember_status", {"job_ids": [alice_job]}))
        assert bob_status.is_error and "no job with id" in tool_text(bob_status)


async def test_a_token_over_its_rate_gets_http_429_with_retry_after(secured):
    url, tokens, _ = secured
    refused: list[MCPError] = []
    answered = 0
    client, transport = _session(url, tokens["bob"])
    with anyio.fail_after(90):
        async with client, transport as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                await session.initialize()
                for _ in range(40):
                    try:
                        result = await session.call_tool("memwal_recall", {"query": "anything"})
                    except MCPError as exc:
                        refused.append(exc)
                    else:
                        assert not result.is_error, tool_text(result)
                        answered += 1
                assert refused, "burst 30 at 6/min: 40 quick calls cannot all pass"
                assert answered > 0
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as plain:
            raw = await plain.post(url, json=INITIALIZE, headers={**JSON_AND_SSE, **bearer(tokens["bob"])})
    assert all("retry after" in exc.message and exc.data["retry_after_s"] >= 1 for exc in refused), refused
    assert raw.status_code == 429
    assert int(raw.headers["retry-after"]) >= 1
    body = raw.json()
    assert body["error"]["data"]["retry_after_s"] == int(raw.headers["retry-after"])
    assert "retry after" in body["error"]["message"] and "rate limit" in body["error"]["message"]


def test_a_non_loopback_server_without_tokens_refuses_to_start(server_env, tmp_path: Path):
    done = subprocess.run(
        [str(MEMWAL), "serve", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=server_env(),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr  # a configuration refused as given (the README's table)
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "memwal-mcp: error: refusing to serve http on 0.0.0.0 without bearer tokens"
    )
    assert "token create" in done.stderr and "--insecure-no-auth" in done.stderr


# --- tokens made while the server runs ---------------------------------------------------


async def _raw_status(url: str, token: str | None) -> int:
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
        return (await initialize(client, url, token)).status_code


async def _until_status(url: str, token: str | None, status: int) -> None:
    """Bounded wait for the server to pick up a token change (its token cache holds a few seconds)."""
    with anyio.fail_after(30):
        while await _raw_status(url, token) != status:
            await anyio.sleep(0.5)


async def test_a_server_started_without_tokens_requires_one_once_one_is_created(
    server_env, tmp_path: Path, db_path: Path
):
    env = server_env()
    with serve(env, tmp_path) as served, anyio.fail_after(120):
        (before,) = await _call(
            served.mcp, None, ("memwal_remember", {"text": "Written before any token", "wait_ms": 15000})
        )
        assert not before.is_error, tool_text(before)

        reader = make_token(env, "alice", "read")
        writer = make_token(env, "alice", "read,write")
        await _until_status(served.mcp, None, 401)  # no token: refused now
        assert await _raw_status(served.mcp, "mwk_made-up-token") == 401

        recall, remember = await _call(
            served.mcp,
            reader,
            ("memwal_recall", {"query": "written before any token", "namespace": "*"}),
            ("memwal_remember", {"text": "The reader tries to write"}),
        )
        assert remember.is_error and "'write' scope" in tool_text(remember)
        assert recall.structured_content["hits"] == [], "alice must not see what the configured owner kept"
        (written,) = await _call(served.mcp, writer, ("memwal_remember", {"text": "Alice writes with her token"}))
        assert not written.is_error, tool_text(written)

        # Revoking every token does not open the server again: it stays secured until it restarts.
        # (A revoke names one token by its hash, so each is revoked in turn; the last says none is left.)
        assert cli(env, "token", "revoke", hash_token(reader)).returncode == 0
        revoked = cli(env, "token", "revoke", hash_token(writer))
        assert "No active token is left" in revoked.stderr and "refuse every request" in revoked.stderr
        await _until_status(served.mcp, writer, 401)
        assert await _raw_status(served.mcp, None) == 401
    owners = dict(db_rows(db_path, "SELECT text, owner FROM remember_jobs"))
    assert owners == {"Written before any token": "local", "Alice writes with her token": "alice"}
    assert "a bearer token exists now" in served.log_text()


async def test_a_token_made_while_serving_works_at_once_and_secures_the_server(
    server_env, tmp_path: Path, db_path: Path
):
    env = server_env()
    with serve(env, tmp_path) as served, anyio.fail_after(120):
        assert await _raw_status(served.mcp, None) == 200
        reader = make_token(env, "alice", "read")
        # The new token is looked up when it is first sent, whatever the server counted before.
        (remember,) = await _call(served.mcp, reader, ("memwal_remember", {"text": "The reader tries to write"}))
        assert remember.is_error and "'write' scope" in tool_text(remember)
        assert await _raw_status(served.mcp, None) == 401
        assert await _raw_status(served.mcp, "mwk_made-up-token") == 401
    assert db_rows(db_path, "SELECT owner FROM remember_jobs") == []
