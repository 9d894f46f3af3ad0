"""The dashboard's browser setup, shared by its tests and by docs/screenshots.py.

Debian's Chromium driven by Playwright (its own browser download is not available here), against
`memwal-mcp serve --transport http` started as a subprocess, with tokens made by `memwal-mcp token
create`, facts remembered through the MCP tools over HTTP, and a scripted OpenAI-compatible LLM on
127.0.0.1 whose UPDATE puts a revision, a merge diff and a MergeGuard outcome on a memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from playwright.async_api import Browser, BrowserContext, Page, Playwright

from tests.e2e.conftest import CALL_TIMEOUT_S, base_env
from tests.e2e.http_helpers import INITIALIZE, JSON_AND_SSE, Served, bearer, make_token, reply_of, rpc, serve
from tests.scripted_llm import Reply, ScriptedLLM

CHROMIUM = Path("/usr/bin/chromium")
NO_SANDBOX = hasattr(os, "geteuid") and os.geteuid() == 0  # Chromium refuses to sandbox itself as root
HOLD_S = 50.0  # the longest a held LLM answer waits; below the server's LLM timeout (LLM_TIMEOUT_S)
LLM_TIMEOUT_S = "60"


async def launch(playwright: Playwright) -> Browser:
    """The system's Chromium. Missing, it is an error to fix (`apt-get install -y chromium`), not a skip.

    Playwright's async API: its sync API keeps an event loop running on the thread for as long as
    the browser lives, and every async test after it would fail to start its own."""
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)")
    return await playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=["--no-sandbox"] if NO_SANDBOX else [], timeout=30_000
    )


def _proposal(request: dict[str, Any]) -> str:
    content = request["messages"][1]["content"]
    return content.split("PROPOSAL:\n<<<\n", 1)[1].split("\n>>>", 1)[0]


class MergePlan:
    """The scripted LLM's answers: UPDATE C1 with a merged body for the proposals registered here,
    CREATE for everything else (so only the facts a test means to merge are merged); the facts
    registered for a text to analyze; and, for a proposal held, no answer until the test lets go
    (its job stays queued meanwhile)."""

    def __init__(self) -> None:
        self._merges: dict[str, str] = {}
        self._facts: dict[str, list[str]] = {}
        self._held: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def merge(self, proposal: str, merged: str) -> None:
        with self._lock:
            self._merges[proposal] = merged

    def extract(self, text: str, facts: list[str]) -> None:
        with self._lock:
            self._facts[text] = facts

    @contextlib.contextmanager
    def hold(self, proposal: str) -> Iterator[threading.Event]:
        """The LLM's answer about `proposal` waits until the block ends (at most HOLD_S), or the
        event it yields is set."""
        release = threading.Event()
        with self._lock:
            self._held[proposal] = release
        try:
            yield release
        finally:
            release.set()

    def __call__(self, request: dict[str, Any]) -> Reply:
        user = request["messages"][-1]["content"]
        if user.startswith("TEXT:\n<<<\n"):  # memwal_analyze's extraction
            source = user.split("TEXT:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
            with self._lock:
                facts = self._facts.get(source, [])
            return Reply(json.dumps({"facts": facts}))
        proposal = _proposal(request)
        with self._lock:
            merged = self._merges.get(proposal)
            held = self._held.get(proposal)
        if held is not None:
            held.wait(HOLD_S)
        return Reply(f"UPDATE C1\n---\n{merged}") if merged is not None else Reply("CREATE")


@dataclass
class Mcp:
    """One MCP session over streamable HTTP, for putting facts in as an agent would. Synchronous:
    a call blocks the test's loop for as long as the server takes, which nothing else needs then."""

    url: str
    token: str
    client: httpx2.Client = field(default_factory=lambda: httpx2.Client(timeout=CALL_TIMEOUT_S + 10))
    session_id: str = ""
    _ids: int = 10

    def _headers(self) -> dict[str, str]:
        headers = {**JSON_AND_SSE, **bearer(self.token)}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        return headers

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not self.session_id:
            opened = self.client.post(self.url, json=INITIALIZE, headers=self._headers())
            assert opened.status_code == 200, opened.text
            self.session_id = opened.headers["mcp-session-id"]
            done = self.client.post(self.url, json=rpc("notifications/initialized", id=None), headers=self._headers())
            assert done.status_code == 202, done.text
        self._ids += 1
        message = rpc("tools/call", {"name": name, "arguments": arguments}, id=self._ids)
        reply = reply_of(self.client.post(self.url, json=message, headers=self._headers()))
        result = reply["result"]
        assert not result.get("isError"), result
        return result["structuredContent"]

    def remember(self, text: str, namespace: str = "default", **extra: Any) -> str:
        """Remember and wait for curation; the memory id it ended in."""
        out = self.call("memwal_remember", {"text": text, "namespace": namespace, "wait_ms": 30000, **extra})
        assert out["status"] == "done", out
        return str(out["memory_id"])

    def recall_texts(self, query: str, namespace: str = "*") -> list[str]:
        out = self.call("memwal_recall", {"query": query, "namespace": namespace, "limit": 20})
        return [hit["text"] for hit in out["hits"]]

    def close(self) -> None:
        self.client.close()


@dataclass
class Dashboard:
    """A running server with its tokens, MCP clients and LLM script."""

    served: Served
    env: dict[str, str]
    tokens: dict[str, str]  # name -> token: alice (read,write), alice_ro (read), bob (read,write)
    mcp: dict[str, Mcp]
    plan: MergePlan

    @property
    def ui(self) -> str:
        return self.served.base + "/ui"


@contextlib.contextmanager
def running_dashboard(tmp: Path, **extra_env: str) -> Iterator[Dashboard]:
    plan = MergePlan()
    with ScriptedLLM(plan) as llm:
        env = base_env(
            tmp,
            tmp / "memwal.db",
            MEMWAL_LLM__BASE_URL=llm.base_url,
            MEMWAL_LLM__MODEL="scripted",
            MEMWAL_LLM__API_KEY="test",
            MEMWAL_LLM__TIMEOUT_S=LLM_TIMEOUT_S,
            # Every test of the suite signs in to this one server from 127.0.0.1, several times a
            # minute: the sign-in limits are tested on servers of their own (extra_env).
            **{"MEMWAL_AUTH__SIGNIN_PER_MINUTE": "10000", "MEMWAL_AUTH__SIGNIN_PER_MINUTE_TOTAL": "10000", **extra_env},
            # a paraphrase with a new version number nominates its original
            MEMWAL_CURATION__NOMINATOR_THRESHOLD="0.5",
            MEMWAL_LOG_LEVEL="WARNING",
        )
        tokens = {
            "alice": make_token(env, "alice", "read,write"),
            "alice_ro": make_token(env, "alice", "read"),
            "bob": make_token(env, "bob", "read,write"),
        }
        with serve(env, tmp) as served:
            clients = {name: Mcp(served.mcp, token) for name, token in tokens.items() if name != "alice_ro"}
            try:
                yield Dashboard(served, env, tokens, clients, plan)
            finally:
                for client in clients.values():
                    client.close()


async def sign_in(context: BrowserContext, dashboard: Dashboard, who: str) -> Page:
    page = await context.new_page()
    await page.goto(dashboard.ui + "/")
    assert page.url.endswith("/ui/signin"), page.url
    await page.fill("#token", dashboard.tokens[who])
    await page.click("button[type=submit]")
    await page.wait_for_url(re.compile(r".*/ui/search$"))
    return page
