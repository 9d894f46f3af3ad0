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
import pytest

from .conftest import MEMWAL, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow


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
    return subprocess.run(
        [str(MEMWAL), *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


DENTIST = "Went to the dentist for a checkup"


async def test_until_before_since_is_refused_naming_both(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, DENTIST, occurred_at="2026-06-15")
            # An empty window used to answer "No memories match", as if nothing had happened then.
            text = await refused(session, "memwal_recall", query="dentist", since="2026-06-30", until="2026-06-01")
            assert text.startswith("until '2026-06-01' is before since '2026-06-30'"), text
            text = await refused(
                session, "memwal_recall", query="dentist", since="2026-06-15T10:00:01Z", until="2026-06-15T10:00:00.5Z"
            )
            assert "is before since" in text, text
            assert await recalled(session, "dentist", since="2026-06-15", until="2026-06-15") == {
                DENTIST: "2026-06-15T00:00:00+00:00"
            }


async def test_dates_with_control_characters_or_junk_are_refused(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, DENTIST, occurred_at="2026-06-15")
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


FIRST = "Archive entry from the first day of the calendar"
SECOND = "Archive entry from the second day of the calendar"
NOON = "Archive entry from noon on the last day of the calendar"
LAST = "Archive entry from the last second of the calendar"


async def test_the_calendar_runs_exactly_from_0001_to_9999(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            # The calendar's own ends were refused as outside it.
            for when, text in [
                ("0001-01-01", FIRST),
                ("0001-01-02T00:00:00", SECOND),
                ("9999-12-31T12:00:00Z", NOON),
                ("9999-12-31T23:59:59Z", LAST),
            ]:
                await remember_done(session, text, occurred_at=when)
            query = "archive entry calendar"
            assert set(await recalled(session, query)) == {FIRST, SECOND, NOON, LAST}
            assert set(await recalled(session, query, since="0001-01-01", until="0001-01-01")) == {FIRST}
            assert set(await recalled(session, query, since="9999-12-31")) == {NOON, LAST}
            assert set(await recalled(session, query, since="9999-12-31T23:59:59Z")) == {LAST}
            assert set(await recalled(session, query, until="9999-12-31T23:59:59Z")) == {FIRST, SECOND, NOON, LAST}
            # An offset that moves a time off the calendar is outside it, said as such.
            for value in ["0001-01-01T12:00:00+14:00", "9999-12-31T20:00:00-05:00"]:
                text = await refused(session, "memwal_remember", text="A fact off the calendar", occurred_at=value)
                assert "outside the years 0001 to 9999 in UTC" in text, text


async def test_a_date_only_until_on_the_first_day_ends_with_that_day(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, SECOND, occurred_at="0001-01-02T00:00:00")
            # The end of day 1 was its start plus a day less a microsecond, which rounding at that
            # magnitude turned into the start of day 2.
            assert await recalled(session, "archive entry calendar", until="0001-01-01") == {}
            assert set(await recalled(session, "archive entry calendar", until="0001-01-02")) == {SECOND}


CHECKED = "Boiler pressure checked by the plumber"
SERVICED = "Boiler serviced by the plumber"


async def test_until_given_to_the_second_or_minute_includes_all_of_it(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, CHECKED, occurred_at="2026-03-01T23:59:59.999Z")
            await remember_done(session, SERVICED, occurred_at="2026-03-02T00:00:00Z")
            shown = (await recalled(session, "boiler plumber"))[CHECKED]
            assert shown == "2026-03-01T23:59:59.999+00:00"  # as given, to the millisecond
            # The instant shown for a fact, copied into until, includes the fact; so does that
            # second or minute written any other way.
            for until in [shown, "2026-03-01T23:59:59Z", "2026-03-01T23:59:59", "2026-03-01T23:59", "2026-03-01"]:
                found = await recalled(session, "boiler plumber", until=until)
                assert set(found) == {CHECKED}, (until, found)
            assert set(await recalled(session, "boiler plumber", until="2026-03-01T23:59:59.9Z")) == {CHECKED}
            assert set(await recalled(session, "boiler plumber", until="2026-03-02T00:00:00Z")) == {CHECKED, SERVICED}
            # since stays exact.
            assert set(await recalled(session, "boiler plumber", since=shown)) == {CHECKED, SERVICED}
            assert set(await recalled(session, "boiler plumber", since="2026-03-02T00:00:00Z")) == {SERVICED}
            assert set(await recalled(session, "boiler plumber", since="2026-03-01T23:59:59.9995Z")) == {SERVICED}


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0 and done.stdout == "", done
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


def test_the_cli_refuses_until_before_since(server_env, tmp_path: Path) -> None:
    done = cli(server_env(), "recall", "coffee", "--since", "2026-06-30", "--until", "2026-06-01", cwd=tmp_path)
    assert "--until '2026-06-01' is before --since '2026-06-30'" in one_line_error(done)  # named as typed


def test_the_cli_refuses_dates_with_control_characters(server_env, tmp_path: Path) -> None:
    env = server_env()
    for args, name in [
        (["recall", "coffee", "--since"], "--since"),
        (["recall", "coffee", "--until"], "--until"),
        (["list", "--since"], "--since"),
        (["remember", "Bought a kettle", "--occurred-at"], "--occurred-at"),
    ]:
        done = cli(env, *args, "2026-01-01T00:00:00\x01", cwd=tmp_path)
        assert f"{name} contains the control character U+0001" in one_line_error(done)
    assert json.loads(cli(env, "list", "--json", cwd=tmp_path).stdout)["memories"] == []


def test_the_cli_until_includes_the_second_it_shows(server_env, tmp_path: Path) -> None:
    env = server_env()
    kettle = "Descaled the kettle with vinegar"
    stored = cli(
        env, "remember", kettle, "--occurred-at", "2026-03-01T23:59:59.999Z", "--wait-ms", "30000", cwd=tmp_path
    )
    assert stored.returncode == 0, stored.stderr
    shown = json.loads(cli(env, "list", "--json", cwd=tmp_path).stdout)["memories"][0]["occurred_at"]
    found = cli(env, "recall", "kettle vinegar", "--until", shown, "--json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert [hit["text"] for hit in json.loads(found.stdout)["hits"]] == [kettle], (shown, found.stdout)


async def test_list_takes_since_and_until_and_only_the_expired(server_env, tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with mcp_stdio_session(server_env(), tmp_path / "stderr.log") as (session, _):
            await remember_done(session, DENTIST, occurred_at="2026-06-15")
            await remember_done(session, "The boiler was serviced", occurred_at="2026-08-01")
            sale = await remember_done(session, "The garden sale ended", expires_at="2001-01-01")

            async def listed(**arguments: Any) -> list[str]:
                result = await call(session, "memwal_list", **arguments)
                assert not result.is_error, tool_text(result)
                return [m["text"] for m in result.structured_content["memories"]]

            assert await listed(since="2026-06-01", until="2026-06-30") == [DENTIST]
            assert await listed(until="2026-06-15") == [DENTIST]
            assert await listed(since="2026-07-01") == ["The boiler was serviced"]
            result = await call(session, "memwal_list", include_expired="only")
            assert [m["id"] for m in result.structured_content["memories"]] == [sale["memory_id"]]
            text = await refused(session, "memwal_list", since="2026-06-30", until="2026-06-01")
            assert text.startswith("until '2026-06-01' is before since '2026-06-30'"), text


FAR = "The Qwzxplorf time capsule opens in the far future"


async def test_far_future_times_keep_the_millisecond_given_everywhere_they_are_shown(server_env, tmp_path) -> None:
    """A float is coarser than a microsecond in year 9999: 10:00:00.123 is stored as 10:00:00.12299...,
    whose digits, cut, showed .122."""
    env = server_env(MEMWAL_DB_PATH=str(tmp_path / "memwal.db"))
    given, shown = "9999-06-15T10:00:00.123Z", "9999-06-15T10:00:00.123+00:00"
    with anyio.fail_after(120):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            done = await remember_done(session, FAR, occurred_at=given, expires_at=given)
            status = (await call(session, "memwal_remember_status", job_ids=[done["job_id"]])).structured_content
            hit = (await call(session, "memwal_recall", query="time capsule")).structured_content["hits"][0]
            listed = (await call(session, "memwal_list")).structured_content["memories"][0]
            history = (await call(session, "memwal_history", memory_id=done["memory_id"])).structured_content
            # Given back as since or until, the time shown takes in the fact.
            assert set(await recalled(session, "time capsule", since=shown, until=shown)) == {FAR}
    for record in (done, status["jobs"][0], hit, listed):
        assert (record["occurred_at"], record["expires_at"]) == (shown, shown), record
    assert history["expires_at"] == shown
    listed_cli = cli(env, "list", "--json", cwd=tmp_path)
    assert listed_cli.returncode == 0, listed_cli.stderr
    (memory,) = json.loads(listed_cli.stdout)["memories"]
    assert (memory["occurred_at"], memory["expires_at"]) == (shown, shown)
