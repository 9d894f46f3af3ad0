"""`memwal-mcp import` of a hand-made file whose retired or superseded memories contradict
themselves: each is refused in one line that names the file, the line, the record and what is
wrong, and nothing of the file is stored; the consistent file then imports and passes `check`.

A retired memory must lead somewhere (merged into, or replaced by, another memory), a live one
nowhere, and the links may chain but never loop; a job's `supersedes` names memories of its
owner. Whether a named memory exists in the database as well is the store contract's part
(tests/store_contract/test_transfer.py runs that on every backend).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_transfer_cli import check_passes, cli, dump, ok, refused, write_jsonl

pytestmark = pytest.mark.slow

T = 1.8e9
BASE = {"owner": "local", "namespace": "default"}
HEADER = {"type": "header", "format": "memwal-export", "version": 2, "exported_at": T, "owners": ["local"]}


def _job(n: int, **fields: Any) -> dict[str, Any]:
    return {
        **BASE,
        "type": "job",
        "id": f"j_000000000000000{n}",
        "text": f"The office is on floor {n}",
        "status": "done",
        "decision": "created",
        "memory_id": f"m_000000000000000{n}",
        "created_at": T + n,
        "updated_at": T + n,
        **fields,
    }


def _memory(n: int, **fields: Any) -> dict[str, Any]:
    return {
        **BASE,
        "type": "memory",
        "id": f"m_000000000000000{n}",
        "body": f"The office is on floor {n}",
        "status": "live",
        "source_job_id": f"j_000000000000000{n}",
        "created_at": T + n,
        "updated_at": T + n,
        **fields,
    }


M1, M2, M3 = (f"m_000000000000000{n}" for n in (1, 2, 3))


def chain(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """A consistent file: memory 1 replaced by memory 2 (whose job says so), memory 2 merged into
    memory 3, which is live. `changes` maps a record ("job2", "memory1", ...) to fields to set."""
    records = {
        "job1": _job(1),
        "job2": _job(2, supersedes=[M1]),
        "job3": _job(3),
        "memory1": _memory(1, status="retired", superseded_by=M2),
        "memory2": _memory(2, status="retired", retired_into=M3),
        "memory3": _memory(3),
    }
    for name, fields in changes.items():
        records[name] = {**records[name], **fields}
    return [HEADER, {"type": "lane", **BASE}, *records.values()]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one memory already, made once: each test imports into a copy."""
    db = tmp_path_factory.mktemp("seeded") / "memwal.db"
    ok(cli("remember", "The garage door code is 4417", db=db))
    return db


# The lines of the records in `chain()`: header 1, lane 2, jobs 3-5, memories 6-8.
@pytest.mark.parametrize(
    ("changes", "line", "expected"),
    [
        ({"memory1": {"superseded_by": None}}, 6, [M1, "is retired but names neither retired_into"]),
        ({"memory1": {"superseded_by": M1}}, 6, [M1, "names itself as its superseded_by"]),
        ({"memory2": {"retired_into": M2}}, 7, [M2, "names itself as its retired_into"]),
        ({"memory1": {"retired_into": M3}}, 6, [M1, f"names both retired_into '{M3}' and superseded_by '{M2}'"]),
        ({"memory3": {"superseded_by": M1}}, 8, [M3, f"is live, yet names superseded_by '{M1}'"]),
        (
            {"memory3": {"status": "retired", "superseded_by": M1}},
            6,
            [M1, f"links come back round to it ({M1} -> {M2} -> {M3} -> {M1})"],
        ),
        (
            {"memory1": {"superseded_by": M2}, "memory2": {"retired_into": None, "superseded_by": M1}},
            6,
            [M1, f"({M1} -> {M2} -> {M1})"],
        ),
        (
            {"job2": {"supersedes": [M1, "m_0000000000000009"]}},
            4,
            ["job 'j_0000000000000002'", "supersedes names memory 'm_0000000000000009'", "no memory of 'local'"],
        ),
    ],
    ids=[
        "retired to nowhere",
        "self-supersede",
        "merged into itself",
        "both",
        "live yet replaced",
        "loop",
        "swap",
        "unknown supersedes",
    ],
)
def test_an_inconsistent_retired_or_superseded_record_is_refused_whole(
    seeded: Path, tmp_path: Path, changes: dict[str, dict[str, Any]], line: int, expected: list[str]
) -> None:
    db = tmp_path / "memwal.db"
    for part in seeded.parent.iterdir():  # the database and any -wal/-shm beside it
        shutil.copy(part, tmp_path / part.name)
    before = dump(db)
    path = write_jsonl(tmp_path / "crafted.jsonl", chain(**changes))
    refused(cli("import", str(path), db=db), f"{path}, line {line}:", "nothing was imported", *expected)
    assert dump(db) == before

    ok(cli("import", str(write_jsonl(tmp_path / "consistent.jsonl", chain())), db=db))
    check_passes(db)
