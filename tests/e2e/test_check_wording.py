"""`memwal-mcp check` counts in English on both backends: "1 live memory waits for a vector", not
"1 live memories wait". The CLI as a subprocess; an undo brings back a memory without its vector."""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import MEMWAL

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_check_counts_one_memory_in_the_singular(server_env, backend) -> None:
    env = server_env()
    old = json.loads(_cli(env, "remember", "Dave drives a Volvo", "--json").stdout)["memory_id"]
    new = json.loads(_cli(env, "remember", "Dave drives a Tesla", "--supersedes", old, "--json").stdout)["memory_id"]
    assert _cli(env, "undo", new).returncode == 0  # the Volvo is live again, its vector not yet back
    checked = _cli(env, "check")
    assert checked.returncode == 0, checked.stderr
    wanted = (
        "1 live memory waits for a vector (the curation worker embeds it)"
        if backend == "sqlite"
        else "1 memory is still waiting for a vector"
    )
    assert wanted in checked.stdout, checked.stdout
    assert "1 live memories" not in checked.stdout and "1 memories" not in checked.stdout
