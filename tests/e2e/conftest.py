"""End-to-end helpers: the real `memwal-mcp` console script, real pipes and sockets, a real database.

The database is a SQLite file, or for a test marked `both_backends` a SQLite file and then a
PostgreSQL database (tests/postgres/server.py): the same test, once per backend, through the
`backend`, `db` and `server_env` fixtures. A test of SQLite itself (its files' bytes, its WAL,
sqlean) in such a module is marked `sqlite_only` and says why. A PostgreSQL that cannot start
fails the tests, never skips them.

Every wait here is bounded, so a hung server fails a test instead of blocking the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from memwal_mcp.store.sqlite.connection import connect
from tests.databases import Database, PostgresDatabase, SqliteDatabase
from tests.postgres.server import shared

MEMWAL = Path(sys.executable).parent / "memwal-mcp"

# The protocol version the SDK's ClientSession.initialize() sends.
PROTOCOL_VERSION = LATEST_HANDSHAKE_VERSION

# Upper bounds for single steps. Generous for 2 slow cores; a hang still fails.
START_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 30.0


# --- environment ------------------------------------------------------------------


def base_env(tmp_path: Path, db: Path | Database, **extra: str) -> dict[str, str]:
    """Everything a server subprocess needs, explicitly: no reliance on inherited variables.

    `db` is a SQLite file or a Database; on PostgreSQL no MEMWAL_DB_PATH is set, so a process
    that opened a SQLite file anyway would make one under tmp_path, where the `db` fixture
    looks for it."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        **(db.env() if isinstance(db, Database) else {"MEMWAL_DB_PATH": str(db)}),
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


BACKENDS = ("sqlite", "postgres")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `both_backends` runs once per backend (ids `[sqlite]`, `[postgres]`);
    any other runs on SQLite, under its own name."""
    marked = metafunc.definition.get_closest_marker("both_backends") is not None
    if not marked or metafunc.definition.get_closest_marker("sqlite_only") is not None:
        return
    if "backend" not in metafunc.fixturenames:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} is marked both_backends but starts no server on the `db` fixture "
            "(use server_env or db); mark it sqlite_only if SQLite is its subject"
        )
    metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The backend of this run of the test: SQLite unless pytest_generate_tests chose."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memwal.db"


@pytest.fixture
def db(backend: str, db_path: Path, tmp_path: Path) -> Iterator[Database]:
    """The database of this test's servers: the SQLite file at db_path, or an empty PostgreSQL
    database of its own (given back emptied, once the test's servers are gone)."""
    if backend == "sqlite":
        yield SqliteDatabase(db_path)
        return
    assert backend == "postgres", backend
    server = shared()
    url = server.take()
    try:
        yield PostgresDatabase(url)
    finally:
        server.give_back(url)
    strays = [path for path in (db_path, tmp_path / "xdg-data" / "memwal-mcp" / "memwal.db") if path.exists()]
    assert not strays, f"a server on PostgreSQL opened a SQLite file: {strays}"


@pytest.fixture
def server_env(tmp_path: Path, db: Database) -> Callable[..., dict[str, str]]:
    def make(**extra: str) -> dict[str, str]:
        return base_env(tmp_path, db, **extra)

    return make


# --- the database, read directly --------------------------------------------------


def db_rows(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = connect(db_path)
    try:
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


def db_scalar(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = db_rows(db_path, sql, params)
    assert len(rows) == 1, rows
    return rows[0][0]


# --- the MCP client over stdio ----------------------------------------------------


@contextlib.asynccontextmanager
async def mcp_stdio_session(
    env: Mapping[str, str],
    stderr_file: Path,
    *,
    command: Path | str = MEMWAL,
    args: list[str] | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[tuple[ClientSession, Any]]:
    """Spawn `memwal-mcp` over stdio with the real client; yields (session, initialize result)."""
    with stderr_file.open("a", encoding="utf-8") as errlog:
        params = StdioServerParameters(command=str(command), args=args or [], env=dict(env), cwd=cwd)
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                with anyio.fail_after(START_TIMEOUT_S):
                    init = await session.initialize()
                yield session, init


def tool_text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


async def call_ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured content of a call that must succeed."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, tool_text(result)
    return dict(result.structured_content or {})


async def call_refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The message of a call that must be a tool error, without the SDK's 'Error executing tool
    ...: ' before it."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result
    return tool_text(result).removeprefix(f"Error executing tool {tool}: ")


# --- a raw JSON-RPC peer over pipes (for stdout purity and SIGKILL) ---------------


class RawServer:
    """`memwal-mcp` as a plain subprocess; we write JSON-RPC lines and read every stdout line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._responses: dict[Any, dict[str, Any]] = {}
        self._arrived = asyncio.Event()
        self._next_id = 0
        self._readers = [
            asyncio.ensure_future(self._read_stdout()),
            asyncio.ensure_future(self._read_stderr()),
        ]

    @classmethod
    async def start(cls, env: Mapping[str, str], *args: str, cwd: Path | None = None) -> RawServer:
        proc = await asyncio.create_subprocess_exec(
            str(MEMWAL),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            limit=16 * 1024 * 1024,
        )
        return cls(proc)

    async def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            text = line.decode("utf-8", errors="replace")
            self.stdout_lines.append(text)
            with contextlib.suppress(ValueError):
                message = json.loads(text)
                if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
                    self._responses[message["id"]] = message
            self._arrived.set()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.stderr_lines.append(line.decode("utf-8", errors="replace"))

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        await self.proc.stdin.drain()

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return self._next_id

    async def response(self, request_id: int | None, timeout: float = CALL_TIMEOUT_S) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while request_id not in self._responses:
                if self.proc.returncode is not None and all(r.done() for r in self._readers):
                    raise AssertionError(
                        f"server exited ({self.proc.returncode}) before answering request {request_id}; "
                        f"stderr:\n{''.join(self.stderr_lines[-30:])}"
                    )
                self._arrived.clear()
                with anyio.move_on_after(0.2):
                    await self._arrived.wait()
        return self._responses[request_id]

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = CALL_TIMEOUT_S
    ) -> dict[str, Any]:
        return await self.response(await self.send_request(method, params), timeout)

    async def initialize(self) -> dict[str, Any]:
        reply = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "memwal-e2e", "version": "1"},
            },
            timeout=START_TIMEOUT_S,
        )
        await self.notify("notifications/initialized")
        return reply

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = await self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in reply, reply
        return reply["result"]

    async def close_stdin_and_wait(self, timeout: float = 15.0) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with contextlib.suppress(Exception):
            await self.proc.stdin.wait_closed()
        with anyio.fail_after(timeout):
            code = await self.proc.wait()
            await asyncio.gather(*self._readers)
        return code

    async def kill(self) -> None:
        """SIGKILL and reap (a zombie would still look alive to the next server's lease check)."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        with anyio.fail_after(10):
            await self.proc.wait()
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)

    async def aclose(self) -> None:
        if self.proc.returncode is None:
            await self.kill()
        else:
            for reader in self._readers:
                reader.cancel()
            await asyncio.gather(*self._readers, return_exceptions=True)


@pytest.fixture
async def raw_servers(db: Database) -> AsyncIterator[list[RawServer]]:
    """Collects RawServers a test starts and kills any still running at the end (before the
    test's database goes: it depends on `db` for that order)."""
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        await server.aclose()


# --- HTTP servers -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(
    port: int, proc: subprocess.Popen[bytes], stderr_file: Path, timeout: float = START_TIMEOUT_S
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"server exited with {proc.returncode} before listening on {port}:\n{stderr_file.read_text()}"
            )
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listened on 127.0.0.1:{port} within {timeout}s:\n{stderr_file.read_text()}")


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL. Returns the exit code after SIGTERM, or None if it had to be killed."""
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        return None
