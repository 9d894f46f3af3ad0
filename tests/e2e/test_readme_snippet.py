"""The README's Claude Desktop snippet works as written: its command and args complete an MCP handshake."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PLACEHOLDER = "/path/to/memwal-mcp"


def _claude_desktop_snippet() -> dict:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```json\n(.*?)```", readme, re.S):
        config = json.loads(block)
        if "mcpServers" in config:
            return config["mcpServers"]["memwal"]
    raise AssertionError("README.md has no Claude Desktop (mcpServers) JSON snippet")


async def test_the_claude_desktop_snippet_starts_a_working_server(tmp_path: Path):
    entry = _claude_desktop_snippet()
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    command = shutil.which(entry["command"], path=path)
    if command is None:
        pytest.skip(f"{entry['command']} is not installed")
    args = [arg.replace(PLACEHOLDER, str(REPO)) for arg in entry.get("args", [])]
    # The user's environment, as a client passes it (uv needs its proxy and certificate settings),
    # with a fresh database.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")}
    env.update(PATH=path, MEMWAL_DB_PATH=str(tmp_path / "memwal.db"))
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(tmp_path))
    with anyio.fail_after(600):  # the first run may build the package and fetch its dependencies
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "memwal"
                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert {"memwal_remember", "memwal_recall"} <= tools
