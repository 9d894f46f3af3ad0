"""Texts in scripts the bundled model cannot read (Thai, many CJK characters, Javanese, most
emoji: WordPiece maps them to [UNK]) all embedded alike, so any of them matched any other at
0.700. Through the real MCP client over stdio and the CLI: such a query is matched by its words
alone, and such a memory is no dense neighbour of anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from .conftest import mcp_stdio_session
from .test_recall_truth import cli, recall, remember, wait_done

pytestmark = pytest.mark.slow

THAI_COFFEE = "ผู้ใช้ชอบกาแฟ"  # the user likes coffee
THAI_CAT = "แมวของฉันชื่อมิว"  # my cat is named Mew
BIRTHDAY = "🎂🎉"
CHINESE_CAT = "我的猫叫小白"  # my cat is called Xiaobai (two of its four characters are [UNK])
CHINESE_COFFEE = "用户喜欢喝咖啡"  # the user likes to drink coffee (all [UNK])
COFFEE = "User prefers dark roast coffee"
UNREADABLE = {THAI_COFFEE, THAI_CAT, BIRTHDAY, CHINESE_COFFEE}


def texts(hits: list[dict[str, Any]]) -> list[str]:
    return [hit["text"] for hit in hits]


async def test_unreadable_queries_and_memories_do_not_match_each_other(server_env, tmp_path: Path) -> None:
    env = server_env()
    with anyio.fail_after(180):
        async with mcp_stdio_session(env, tmp_path / "stderr.log") as (session, _):
            facts = [THAI_COFFEE, THAI_CAT, BIRTHDAY, CHINESE_CAT, CHINESE_COFFEE, COFFEE]
            await wait_done(session, [await remember(session, text) for text in facts])

            # Unreadable queries: no unreadable fact comes back on the strength of its [UNK] vector.
            for query in ["กาแฟ", "แมว", "ꦱꦼꦤꦼꦁ", "猫", "🎈🎁"]:
                text, hits = await recall(session, query, limit=10)
                assert not UNREADABLE & set(texts(hits)), (query, text)
                assert all(hit["score"] < 0.7 for hit in hits), (query, text)
            text, hits = await recall(session, THAI_CAT, limit=10)
            assert texts(hits) == [THAI_CAT], text

            # Readable queries: the unreadable facts are nobody's dense neighbours, even with no floor.
            text, hits = await recall(session, "coffee", limit=10)
            assert texts(hits)[0] == COFFEE and not UNREADABLE & set(texts(hits)), text
            _, everything = await recall(session, "what does the user drink", limit=10, min_score=0)
            for hit in everything:
                if hit["text"] in UNREADABLE:
                    assert hit["score"] == 0.0, everything
            _, cats = await recall(session, "我的猫", limit=10, min_score=0.5)
            assert not UNREADABLE & set(texts(cats)), cats

    # Dense recall asked for: a query the model cannot read falls back to its words.
    async with mcp_stdio_session(server_env(MEMWAL_RECALL__MODE="dense"), tmp_path / "stderr.log") as (session, _):
        text, hits = await recall(session, THAI_CAT, limit=10)
        assert texts(hits) == [THAI_CAT], text
        text, hits = await recall(session, "กาแฟ", limit=10)
        assert not UNREADABLE & set(texts(hits)), text

    dry = cli(env, "forget", "--query", "กาแฟ", "--dry-run", "--json", cwd=tmp_path)
    would = {item["text"] for item in json.loads(dry.stdout)["would_forget"]}
    assert not would & (UNREADABLE - {THAI_COFFEE}), dry.stdout
