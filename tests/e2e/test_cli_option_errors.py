"""A command line the service refuses names the option as typed, not the tool argument behind it
(`--max-chars`, not max_chars; `--expires`, not expires_at): the CLI as a subprocess, a real SQLite file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import MEMWAL

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["recall", "x", "--max-chars", "0"], "--max-chars must be an integer from 1 to 1000000, got 0"),
        (["recall", "x", "--limit", "0"], "--limit must be an integer from 1 to 100, got 0"),
        (["recall", "x", "--min-score", "3"], "--min-score must be a number from 0 to 1, got 3.0"),
        (
            ["recall", "x", "--since", "2026-03-01", "--until", "2026-01-02"],
            "--until '2026-01-02' is before --since '2026-03-01'; give an until on or after the since",
        ),
        (["remember", "x", "--wait-ms", "99999"], "--wait-ms must be an integer from 0 to 30000, got 99999"),
        (["remember", "x", "--expires", "tomorrow"], "--expires 'tomorrow' is not an ISO-8601 date or date-time"),
        (["remember", "x", "--occurred-at", "soon"], "--occurred-at 'soon' is not an ISO-8601 date or date-time"),
        (
            ["remember", "x", "--supersedes", "j_0000000000000000"],
            "--supersedes must hold memory ids such as 'm_0123456789abcdef', got 'j_0000000000000000'",
        ),
        (["remember", "x", "--key", " "], "--key must be a non-empty string (or omitted)"),
        (["remember", "x" * 70000], "text is 70000 bytes; the limit is 65536 bytes"),  # no option: the limit stays
        (["list", "--limit", "500"], "--limit must be an integer from 1 to 100, got 500"),
        (["analyze", "-", "--wait-ms", "-1"], "--wait-ms must be an integer from 0 to 30000, got -1"),
    ],
)
def test_a_refused_command_line_names_the_option(server_env, tmp_path: Path, args: list[str], said: str) -> None:
    env = server_env(
        MEMWAL_DB_PATH=str(tmp_path / "memwal.db"), MEMWAL_LLM__BASE_URL="http://127.0.0.1:9", MEMWAL_LLM__MODEL="m"
    )
    done = subprocess.run(
        [str(MEMWAL), *args], env=env, input="A fact", capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.startswith(f"memwal-mcp: error: {said}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
