"""Started by hand in a terminal, `memwal-mcp` explains itself on stderr, not on stdout."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

MEMWAL = Path(sys.executable).parent / "memwal-mcp"


@pytest.mark.slow
def test_a_terminal_on_stdin_gets_client_setup_help_on_stderr(tmp_path: Path):
    controller, terminal = pty.openpty()
    env = {**os.environ, "MEMWAL_DB_PATH": str(tmp_path / "memwal.db"), "HOME": str(tmp_path)}
    process = subprocess.Popen([str(MEMWAL)], stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (tmp_path / "memwal.db").exists():
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=30)
        os.close(controller)
        os.close(terminal)
    assert b'"mcpServers"' in stderr and b"memwal-mcp recall" in stderr
    assert stdout == b""


def test_help_lists_every_command():
    out = subprocess.run([str(MEMWAL), "--help"], capture_output=True, text=True, timeout=60).stdout
    for command in ("serve", "remember", "recall", "status", "history", "stats"):
        assert command in out
