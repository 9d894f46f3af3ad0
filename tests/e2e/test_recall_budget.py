"""max_chars and collapsed_ids as a client sees them: the real `mcp` client, `memwal-mcp` over stdio."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.conftest import mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

DEPLOYS = [f"Deploy {name} goes out from us-east-1 on Fridays" for name in ("alpha", "beta", "gamma", "delta")]
SAME = "The deploy freeze starts on December 20"


async def _call(session: Any, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, tool_text(result)
    return result


async def test_max_chars_is_never_exceeded_the_note_is_exact_and_collapsed_ids_name_the_copies(server_env, tmp_path):
    env = server_env(MEMWAL_CURATION__ENABLED="false")  # every remember its own memory: real duplicates
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            copies = [
                (await _call(session, "memwal_remember", text=text, wait_ms=20000)).structured_content["memory_id"]
                for text in (SAME, SAME.upper(), "  " + SAME + " ")
            ]
            for text in DEPLOYS:
                await _call(session, "memwal_remember", text=text, wait_ms=20000)
            full = await _call(session, "memwal_recall", query="deploy", limit=10)
            hits = full.structured_content["hits"]
            assert len(hits) == 5 and full.structured_content["omitted"] == 0
            (same,) = [hit for hit in hits if hit["text"].lower().strip() == SAME.lower()]
            assert sorted([same["id"], *same["collapsed_ids"]]) == sorted(copies)
            assert all(hit["collapsed_ids"] == [] for hit in hits if hit is not same)

            blocks = tool_text(full).split("\n")
            # A budget that holds exactly the first two hits (each one line here, or two with a copies note).
            two = [i for i, line in enumerate(blocks) if line.startswith("3. ")][0]
            budget = len("\n".join(blocks[:two]))
            cut = await _call(session, "memwal_recall", query="deploy", limit=10, max_chars=budget)
            text = tool_text(cut)
            note = f"(3 more relevant memories left out by max_chars={budget}.)"
            assert text.endswith("\n" + note), text
            assert len(text[: -len(note) - 1]) <= budget
            assert [h["id"] for h in cut.structured_content["hits"]] == [h["id"] for h in hits[:2]]
            assert cut.structured_content["omitted"] == 3
            tight = await _call(session, "memwal_recall", query="deploy", limit=10, max_chars=budget - 1)
            assert tight.structured_content["omitted"] == 4
            # A budget below the best hit: nothing shown, so no "more"; the note says what the best one needs.
            second = [i for i, line in enumerate(blocks) if line.startswith("2. ")][0]
            first = len("\n".join(blocks[:second]))  # the best hit's line and its notes
            none = await _call(session, "memwal_recall", query="deploy", limit=10, max_chars=first - 1)
            assert none.structured_content["hits"] == [] and none.structured_content["omitted"] == 5
            assert tool_text(none) == (
                f"(No hit fits max_chars={first - 1}: the best one needs {first} characters; "
                "5 relevant memories left out.)"
            )
            refused = await session.call_tool("memwal_recall", {"query": "deploy", "max_chars": 0})
            assert refused.is_error and "max_chars" in tool_text(refused)
