"""Date arguments (occurred_at, since, until) through the real MCP client and the CLI: one strict
form, the whole calendar from 0001-01-01 to 9999-12-31 in UTC, and `until` meaning the whole of
its last unit, so the time shown for a fact, given back as `until`, includes that fact."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio

from .conftest import MEMWAL, mcp_stdio_session, tool_text


async def call(session: Any, tool: str, **arguments: Any) -> Any:
    return await session.call_tool(tool, arguments)


async def remember_done(session: Any, text: str, **arguments: Any) -> dict[str, Any]:
    result = await call(session, "memwal_remember", text=text, wait_ms=30000, **arguments)
    assert not result.is_error, tool_text(result)
    assert result.structured_content["status"] == "done", result.structured_content
    return result.structured_content


async def recalled(session: Any, query: str, **arguments: Any) -> dict[str, str | None]:
    """The facts recalled, each with the occurred_at shown for it."""
    result = await call(session, "memwal_recall", query=query, limit=20, **arguments)
    assert not result.is_error, tool_text(result)
    return {hit["text"]: hit["occurred_at"] for hit in result.structured_content["hits"]}


async def refused(session: Any, tool: str, **arguments: Any) -> str:
    result = await call(session, tool, **arguments)
    assert result.is_error, (arguments, tool_text(result))
    text = tool_text(result).removeprefix(f"Error executing tool {tool}: ")
    assert "\n" not in text.strip(), text
    return text


def cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMWAL), *args], env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


DENTIST = "Went to the dentist for a checkup"


async def test_bad_dates_are_refused_naming_the_argument(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, DENTIST, occurred_at="2026-06-15")

            # An empty window used to answer "No memories match", as if nothing had happened then.
            text = await refused(session, "memwal_recall", query="dentist", since="2026-06-30", until="2026-06-01")
            assert "until '2026-06-01'" in text and "since '2026-06-30'" in text, text
            assert await recalled(session, "dentist", since="2026-06-15", until="2026-06-15") == {DENTIST: "2026-06-15T00:00:00+00:00"}

            # A NUL (or any control character) inside a date was read past and the date accepted.
            for value in ["2026-01-01T00:00:00\x00", "2026-07-01T00:00:00\x00+05:00", "2026-07-01\x01", "2026-07-01\n"]:
                for name in ("since", "until"):
                    text = await refused(session, "memwal_recall", query="dentist", **{name: value})
                    assert text.startswith(f"{name} contains the control character"), text
                text = await refused(session, "memwal_remember", text="Bought a new toothbrush", occurred_at=value)
                assert text.startswith("occurred_at contains the control character"), text
            for value in [" 2026-07-01 ", "2026-07-01junk", "2026-07-01T00:00:00+05:00junk", "2026-07-01X10:00"]:
                text = await refused(session, "memwal_recall", query="dentist", since=value)
                assert text.startswith("since "), text

            # Nothing refused was stored.
            listed = await call(session, "memwal_list")
            assert [memory["text"] for memory in listed.structured_content["memories"]] == [DENTIST]


EDGES = {
    "0001-01-01": "Archive entry from the first day of the calendar",
    "0001-01-02T00:00:00": "Archive entry from the second day of the calendar",
    "2026-03-01T23:59:59.999Z": "Boiler pressure checked by the plumber",
    "2026-03-02T00:00:00Z": "Boiler serviced by the plumber",
    "9999-12-31T12:00:00Z": "Archive entry from noon on the last day of the calendar",
    "9999-12-31T23:59:59Z": "Archive entry from the last second of the calendar",
}


async def test_the_whole_calendar_and_until_includes_its_last_unit(server_env, tmp_path: Path) -> None:
    first, second, checked, serviced, noon, last = EDGES.values()
    with anyio.fail_after(180):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            for when, text in EDGES.items():  # the calendar's own ends were refused as outside it
                await remember_done(session, text, occurred_at=when)
            everything = await recalled(session, "archive entry boiler plumber calendar")
            assert set(everything) == set(EDGES.values()), everything

            def only(found: dict[str, str | None]) -> set[str]:
                return set(found)

            # A date-only until is that whole day and no more, at the first day as anywhere else.
            assert only(await recalled(session, "archive entry calendar", until="0001-01-01")) == {first}
            assert only(await recalled(session, "archive entry calendar", since="0001-01-01", until="0001-01-01")) == {first}
            assert only(await recalled(session, "archive entry calendar", since="9999-12-31")) == {noon, last}
            assert only(await recalled(session, "archive entry calendar", since="9999-12-31T23:59:59Z")) == {last}
            assert only(await recalled(session, "archive entry calendar", until="9999-12-31T23:59:59Z")) == {
                first, second, noon, last}

            # The instant shown for a fact, copied into until, includes the fact; so does that
            # second or minute written any other way. since stays exact.
            shown = everything[checked]
            assert shown is not None
            for until in [shown, "2026-03-01T23:59:59Z", "2026-03-01T23:59:59", "2026-03-01T23:59", "2026-03-01"]:
                found = await recalled(session, "boiler plumber", until=until)
                assert only(found) == {checked}, (until, found)
            assert only(await recalled(session, "boiler plumber", since=shown)) == {checked, serviced}
            assert only(await recalled(session, "boiler plumber", since="2026-03-02T00:00:00Z")) == {serviced}
            assert only(await recalled(session, "boiler plumber", until="2026-03-02T00:00:00Z")) == {checked, serviced}

            # An offset that moves a time off the calendar is outside it, said as such.
            for value in ["0001-01-01T12:00:00+14:00", "9999-12-31T20:00:00-05:00"]:
                text = await refused(session, "memwal_remember", text="A fact off the calendar", occurred_at=value)
                assert "outside the years 0001 to 9999 in UTC" in text, text


def test_the_cli_refuses_bad_dates_and_includes_the_shown_second(server_env, tmp_path: Path) -> None:
    env = server_env()
    done = cli(env, "recall", "coffee", "--since", "2026-06-30", "--until", "2026-06-01", cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == "", done
    assert "until '2026-06-01' is before since '2026-06-30'" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for args, name in [(["recall", "coffee", "--since"], "since"), (["recall", "coffee", "--until"], "until"),
                       (["list", "--since"], "since"), (["remember", "Bought a kettle", "--occurred-at"], "occurred_at")]:
        done = cli(env, *args, "2026-01-01T00:00:00\x01", cwd=tmp_path)
        assert done.returncode != 0, done
        assert f"{name} contains the control character U+0001" in done.stderr, done.stderr
    assert json.loads(cli(env, "list", "--json", cwd=tmp_path).stdout)["memories"] == []

    kettle = "Descaled the kettle with vinegar"
    stored = cli(env, "remember", kettle, "--occurred-at", "2026-03-01T23:59:59.999Z", "--wait-ms", "30000", cwd=tmp_path)
    assert stored.returncode == 0, stored.stderr
    listed = json.loads(cli(env, "list", "--json", cwd=tmp_path).stdout)["memories"]
    shown = listed[0]["occurred_at"]
    found = cli(env, "recall", "kettle vinegar", "--until", shown, "--json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert [hit["text"] for hit in json.loads(found.stdout)["hits"]] == [kettle], (shown, found.stdout)
