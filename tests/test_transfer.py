"""Export and import: memwal exports round-trip, re-imports are no-ops, forgotten text
stays gone, memory.json and Markdown come in through the remember path.

Real SQLite files, the real bundled model, a scripted OpenAI-compatible server for
the revision and the consolidation, and the CLI through its entry point.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memwal_mcp.config import load_settings
from memwal_mcp.curation import deferred
from memwal_mcp.embedding import FastEmbedEmbedder
from memwal_mcp.errors import InvalidInput
from memwal_mcp.service import MemoryService
from memwal_mcp.store.sqlite import fts
from memwal_mcp.store.sqlite.connection import connect
from memwal_mcp.transfer import (
    ImportFormatError,
    export_memories,
    import_file,
    wait_until_embedded,
)
from memwal_mcp.transfer.foreign_import import text_items
from memwal_mcp.transfer.format import VERSION, detect_kind
from memwal_mcp.transfer.native_import import import_native
from tests.environment import isolated
from tests.scripted_llm import Reply, ScriptedLLM

MEMWAL = Path(sys.executable).parent / "memwal-mcp"

WORK = [
    "Deploys go out on Fridays from us-east-1",
    "The staging database is backed up every night at 02:00 UTC",
    "Alice is on call for the payments service this week",
    "The team writes backend services in Go and the CLI in Python",
    "Code review needs two approvals before merging to main",
    "The CI pipeline runs on GitHub Actions with a 30 minute timeout",
    "Production logs are kept for 90 days in the logging cluster",
    "The quarterly planning meeting is on the first Monday of the quarter",
    "Feature flags are managed in LaunchDarkly",
    "The API rate limit is 600 requests per minute per token",
    "Incidents are tracked in the #incidents Slack channel",
    "The mobile app release train leaves every second Wednesday",
    "Database migrations must be backwards compatible for one release",
    "The design system lives in the ui-kit repository",
    "Sentry alerts for the checkout flow page the on-call engineer",
    "The data warehouse is refreshed hourly from Postgres replicas",
    "Pull requests should stay under 400 changed lines",
]
HOME = [
    "The user prefers dark roast coffee",
    "The office plant needs water on Mondays",
    "The user's daughter has piano lessons on Thursdays",
    "The user is vegetarian but eats fish occasionally",
    "The car is due for an oil change at 60,000 km",
    "The user runs 5 km every Saturday morning",
    "The user is learning Japanese with a tutor",
    "The wifi router is in the hallway closet",
    "The user's favourite author is Ursula K. Le Guin",
    "The user's passport expires in 2029",
    "The user goes to bed around 23:00 on weeknights",
    "The user's sister lives in Lisbon",
    "The family dog is called Miso",
    "Rent is paid on the first of every month",
    "The user's bike has a flat rear tyre",
]
DATED = ("Kubernetes clusters were upgraded to 1.30", "2026-03-02")
STAGING = "Staging API lives at https://staging.example.com/api on version 2.4.1"
STAGING_PROPOSAL = "Staging API is at https://staging.example.com/api, now version 2.5.0"
STAGING_MERGED = "Staging API lives at https://staging.example.com/api, version 2.5.0 (previously 2.4.1)."
PEANUTS = ["The user is allergic to peanuts", "User has a peanut allergy"]
PEANUT_PROPOSAL = "The user has an allergy to peanuts"
PEANUT_MERGED = "The user is allergic to peanuts (a peanut allergy)."
SECRET = "The vault recovery phrase is kept in the grey Zyxwvut cabinet"
BOB = [("work", "Bob's locker code is 4417"), ("work", "Bob takes the 8:15 train"), ("home", "Bob's cat is Pixel")]

QUERIES = [
    ("when do deploys go out", "work"),
    ("staging API version", "work"),
    ("who is on call", "work"),
    ("database backup schedule", "work"),
    ("food allergy", "home"),
    ("coffee preference", "home"),
    ("what does the user do on Saturdays", "home"),
    ("Kubernetes upgrade", "*"),
    ("vault recovery phrase cabinet", "*"),
]


def _script(request: dict[str, Any]) -> Reply:
    """UPDATE for the staging proposal, CONSOLIDATE for the peanut one, CREATE otherwise."""
    content = request["messages"][1]["content"]
    proposal = content.split("CANDIDATES:")[0]
    shown = dict(re.findall(r"^\[(C\d+)\][^\n]*\n<<<\n(.*?)\n>>>", content, re.M | re.S))
    if STAGING_PROPOSAL in proposal:
        label = next(label for label, body in shown.items() if body == STAGING)
        return Reply(f"UPDATE {label}\n---\n{STAGING_MERGED}")
    if PEANUT_PROPOSAL in proposal:
        labels = [label for label, body in shown.items() if body in PEANUTS]
        return Reply(f"CONSOLIDATE {' '.join(labels)}\n---\n{PEANUT_MERGED}")
    return Reply("CREATE")


@dataclass(frozen=True)
class Source:
    db: Path
    staging_id: str
    peanut_id: str
    retired_id: str
    secret_id: str


@asynccontextmanager
async def opened(
    db: Path, embedder: FastEmbedEmbedder, worker: bool = True, **overrides: Any
) -> AsyncIterator[MemoryService]:
    svc = MemoryService(load_settings(db_path=db, **overrides), embedder=embedder)
    async with svc.running(worker=worker):
        yield svc


@pytest.fixture(scope="module")
async def source(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedEmbedder) -> Source:
    """~40 memories of two owners in two namespaces, with occurrences, a dated fact, an
    UPDATE (a revision), a CONSOLIDATE (a retired memory) and a forgotten memory."""
    folder = tmp_path_factory.mktemp("source")
    db = folder / "source.db"
    with isolated(folder):  # module scope: isolated as conftest isolates each test
        with ScriptedLLM(_script) as llm:
            llm_settings = {"base_url": llm.base_url, "model": "scripted", "timeout_s": 5}
            async with opened(db, embedder, llm=llm_settings, curation={"nominator_threshold": 0.5}) as svc:

                async def remember(text: str, namespace: str, owner: str = "local", **kw: Any):
                    job = (await svc.remember(owner, text, namespace, wait_ms=20000, **kw)).job
                    assert job.status == "done", job
                    return job

                staging = await remember(STAGING, "work")
                for text in WORK:
                    await remember(text, "work")
                await remember(DATED[0], "work", occurred_at=DATED[1])
                assert (await remember(STAGING_PROPOSAL, "work")).decision == "updated"
                peanuts = [await remember(text, "home") for text in PEANUTS]
                for text in HOME:
                    await remember(text, "home")
                consolidated = await remember(PEANUT_PROPOSAL, "home")
                assert consolidated.decision == "consolidated"
                # Occurrences: the same fact again, once with other spacing and case.
                assert (await remember(WORK[0], "work")).decision == "occurrence"
                assert (await remember("  the user PREFERS dark roast coffee ", "home")).decision == "occurrence"
                secret = await remember(SECRET, "home", idempotency_key="k-vault")
                await remember(SECRET + " ", "home")  # an occurrence of the secret: erased with it
                await svc.forget("local", secret.memory_id)
                for namespace, text in BOB:
                    await remember(text, namespace, owner="bob")
                retired = ({j.memory_id for j in peanuts} - {consolidated.memory_id}).pop()
                assert (await svc.history("local", retired)).status == "retired"
                assert await wait_until_embedded(svc, None) == 0
    return Source(db, staging.memory_id, consolidated.memory_id, retired, secret.memory_id)


# --- helpers -----------------------------------------------------------------


def rows(db: Path, sql: str, *args: Any) -> list[tuple]:
    conn = connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def full_text_rows(db: Path) -> list[tuple]:
    """(memory id, table's owner, table's namespace, indexed body) across every lane's full-text table."""
    conn = connect(db)
    try:
        found: list[tuple] = []
        for lane, name in fts.tables(conn).items():
            found += conn.execute(
                f"SELECT m.id, l.owner, l.namespace, f.body FROM {name} f JOIN memories m ON m.rowid = f.rowid"
                " JOIN lanes l ON l.id = ?",
                (lane,),
            ).fetchall()
        return sorted(found)
    finally:
        conn.close()


def table_counts(db: Path) -> dict[str, int]:
    """Rows in every table of the file, the FTS and vector shadow tables included."""
    names = [r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {name: rows(db, f'SELECT COUNT(*) FROM "{name}"')[0][0] for name in names if name != "schema_migrations"}


def stored_rows(db: Path) -> int:
    """Rows an import writes: lanes, jobs, memories, revisions, tombstones."""
    tables = ("lanes", "remember_jobs", "memories", "memory_revisions", "forgotten")
    return sum(rows(db, f"SELECT COUNT(*) FROM {table}")[0][0] for table in tables)


def state(db: Path) -> dict[str, list[tuple]]:
    """Everything an export carries, keyed by public ids (not rowids), plus the FTS rows."""
    return {
        "lanes": rows(db, "SELECT owner, namespace FROM lanes ORDER BY owner, namespace"),
        "jobs": rows(
            db,
            "SELECT id, owner, namespace, text, idempotency_key, status, attempts, decision, memory_id,"
            " error, occurred_at, created_at, updated_at FROM remember_jobs ORDER BY seq",
        ),
        "memories": rows(
            db,
            "SELECT id, owner, namespace, body, norm_key, status, retired_into, source_job_id,"
            " occurrences, occurred_at, created_at, updated_at FROM memories"
            " WHERE status != 'forgotten' ORDER BY id",
        ),
        "revisions": rows(
            db,
            "SELECT m.id, r.body, r.decision, r.job_id, r.llm_model, r.guard, r.merged_ids,"
            " r.created_at FROM memory_revisions r JOIN memories m ON m.rowid = r.memory_rowid"
            " ORDER BY m.id, r.id",
        ),
        "forgotten": rows(
            db, "SELECT memory_id, owner, namespace, jobs, forgotten_at FROM forgotten ORDER BY memory_id"
        ),
        "fts": full_text_rows(db),
        "vectors": rows(db, "SELECT id FROM memories WHERE status = 'live' AND vector_model IS NOT NULL ORDER BY id"),
    }


async def recall_all(svc: MemoryService, owner: str = "local") -> list[list[tuple]]:
    results = []
    for query, namespace in QUERIES:
        found = await svc.recall(owner, query, limit=5, namespace=namespace)
        results.append([(h.id, h.text, round(h.score, 4), h.namespace, h.copies, h.pending) for h in found.hits])
    return results


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def export_source(source: Source, embedder: FastEmbedEmbedder, path: Path, owner: str | None) -> None:
    async with opened(source.db, embedder, worker=False) as svc:
        await export_memories(svc, path, owner)


# --- memwal exports ------------------------------------------------------------


async def test_round_trip_gives_the_same_recall_and_a_second_import_changes_nothing(
    source: Source, embedder: FastEmbedEmbedder, tmp_path: Path
):
    exported = tmp_path / "all.jsonl"
    await export_source(source, embedder, exported, None)
    async with opened(source.db, embedder, worker=False) as svc:
        expected = await recall_all(svc)
        expected_bob = await recall_all(svc, "bob")
        histories = [await svc.history("local", m) for m in (source.staging_id, source.peanut_id, source.retired_id)]
        listed = await svc.list("local", limit=100)

    target = tmp_path / "target.db"
    async with opened(target, embedder) as svc:
        summary = await import_file(svc, exported, owner="local", all_owners=True)
        assert summary.kind == "memwal" and summary.owners == ["bob", "local"] and not summary.skipped
        assert await wait_until_embedded(svc, None) == 0
        assert await recall_all(svc) == expected
        assert await recall_all(svc, "bob") == expected_bob
        assert [await svc.history("local", h.memory_id) for h in histories] == histories
        assert await svc.list("local", limit=100) == listed
        once = table_counts(target)

        again = await import_file(svc, exported, owner="local", all_owners=True)
        assert not again.added and sum(again.skipped.values()) == sum(summary.added.values())
        assert await wait_until_embedded(svc, None) == 0
    assert table_counts(target) == once
    assert state(target) == state(source.db)


async def test_the_export_is_documented_jsonl_and_keeps_forgotten_text_out(
    source: Source, embedder: FastEmbedEmbedder, tmp_path: Path
):
    exported = tmp_path / "all.jsonl"
    await export_source(source, embedder, exported, None)
    raw = exported.read_bytes()
    for word in (b"Zyxwvut", b"zyxwvut", b"recovery phrase"):
        assert word not in raw
    lines = records(exported)
    header, body = lines[0], lines[1:]
    assert header["type"] == "header" and header["format"] == "memwal-export" and header["version"] == VERSION == 2
    kinds = [r["type"] for r in body]
    assert kinds == sorted(kinds, key=["lane", "job", "memory", "revision", "tombstone"].index)
    assert header["counts"] == {k: kinds.count(k) for k in ("lane", "job", "memory", "revision", "tombstone")}
    (tombstone,) = [r for r in body if r["type"] == "tombstone"]
    erased = [r for r in body if r["type"] == "job" and r["memory_id"] == source.secret_id]
    assert len(erased) == 2 and all(r["text"] == "" and r["decision"] == "forgotten" for r in erased)
    # The tombstone carries the emptied memory's bookkeeping (never a body), so an import keeps its row.
    assert tombstone == {
        "type": "tombstone",
        "memory_id": source.secret_id,
        "owner": "local",
        "namespace": "home",
        "jobs": 2,
        "forgotten_at": tombstone["forgotten_at"],
        "source_job_id": erased[0]["id"],
        "retired_into": None,
        "occurred_at": None,
        "created_at": tombstone["created_at"],
        "updated_at": tombstone["forgotten_at"],
    }
    assert source.secret_id not in {r["id"] for r in body if r["type"] == "memory"}
    assert {r["status"] for r in body if r["type"] == "memory"} == {"live", "retired"}
    assert any(r["type"] == "revision" and r["body"] == STAGING for r in body)
    assert any(r["type"] == "memory" and r["occurrences"] == 1 and r["body"] == WORK[0] for r in body)
    assert all(isinstance(r["created_at"], float) for r in body if "created_at" in r)
    doc = (Path(__file__).parent.parent / "docs" / "export-format.md").read_text(encoding="utf-8")
    for record in lines:  # every record type and field is documented
        assert f"`{record['type']}`" in doc
        for name in record:
            assert f"`{name}`" in doc, (record["type"], name)


async def test_owner_filter_exports_only_that_owner_and_imports_under_another(
    source: Source, embedder: FastEmbedEmbedder, tmp_path: Path
):
    bob_file, local_file = tmp_path / "bob.jsonl", tmp_path / "local.jsonl"
    await export_source(source, embedder, bob_file, "bob")
    await export_source(source, embedder, local_file, "local")
    bob_records, local_records = records(bob_file), records(local_file)
    assert bob_records[0]["owners"] == ["bob"] and local_records[0]["owners"] == ["local"]
    assert {r["owner"] for r in bob_records[1:]} == {"bob"}
    assert {r["owner"] for r in local_records[1:]} == {"local"}
    assert "Bob's locker code" not in local_file.read_text() and "dark roast" not in bob_file.read_text()

    async with opened(tmp_path / "team.db", embedder) as svc:
        # A one-owner export lands under the owner doing the import.
        await import_file(svc, bob_file, owner="robert")
        await wait_until_embedded(svc, None)
        found = await svc.recall("robert", "locker code", limit=1, namespace="work")
        assert found.hits[0].text == "Bob's locker code is 4417"
        assert (await svc.recall("bob", "locker code", namespace="*")).hits == []
        # A file of several owners needs --all-owners.
        both = tmp_path / "both.jsonl"
        await export_source(source, embedder, both, None)
        with pytest.raises(InvalidInput, match="2 owners.*--all-owners"):
            await import_file(svc, both, owner="robert")
        with pytest.raises(InvalidInput, match="--namespace applies to foreign files only"):
            await import_file(svc, bob_file, owner="robert", namespace="x")
        # The same ids under a third owner: refused, nothing attached to robert's rows.
        before = state(tmp_path / "team.db")
        with pytest.raises(InvalidInput, match="already exists in this database for an owner other than 'mallory'"):
            await import_file(svc, bob_file, owner="mallory")
        assert state(tmp_path / "team.db") == before


async def test_a_cut_file_stores_nothing_and_the_complete_file_then_imports_whole(
    source: Source, embedder: FastEmbedEmbedder, tmp_path: Path
):
    # One transaction per import: a file cut short (an interrupted export or copy) is refused
    # without leaving half of it behind, so a later import of the whole file starts clean.
    exported = tmp_path / "all.jsonl"
    await export_source(source, embedder, exported, None)
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    cut_mid_line = tmp_path / "cut.jsonl"
    cut_mid_line.write_text("".join(lines[:half]) + lines[half][: len(lines[half]) // 2], encoding="utf-8")
    cut_at_line = tmp_path / "cut-at-line.jsonl"
    cut_at_line.write_text("".join(lines[: half + 10]), encoding="utf-8")

    full = tmp_path / "full.db"
    async with opened(full, embedder) as svc:
        await import_native(svc, exported, None)
        await wait_until_embedded(svc, None)

    resumed = tmp_path / "resumed.db"
    async with opened(resumed, embedder) as svc:
        with pytest.raises(ImportFormatError, match=rf"line {half + 1}: not valid JSON"):
            await import_native(svc, cut_mid_line, None)
        assert stored_rows(resumed) == 0
        with pytest.raises(ImportFormatError, match="incomplete.*nothing was imported"):
            await import_native(svc, cut_at_line, None)
        assert stored_rows(resumed) == 0
        summary = await import_native(svc, exported, None)
        assert summary.added and not summary.skipped
        await wait_until_embedded(svc, None)
    assert state(resumed) == state(full)
    assert table_counts(resumed) == table_counts(full)


async def test_a_malformed_line_is_named_and_nothing_of_the_file_is_written(
    source: Source, embedder: FastEmbedEmbedder, tmp_path: Path
):
    exported = tmp_path / "all.jsonl"
    await export_source(source, embedder, exported, None)
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    job_lines = [n for n, line in enumerate(lines, start=1) if '"type":"job"' in line]
    bad_line = job_lines[14]
    broken = json.loads(lines[bad_line - 1])
    broken["status"] = "exploded"
    lines[bad_line - 1] = json.dumps(broken) + "\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")

    target = tmp_path / "target.db"
    async with opened(target, embedder) as svc:
        with pytest.raises(ImportFormatError, match=rf"line {bad_line}: bad job record: status"):
            await import_native(svc, bad, None)
    assert stored_rows(target) == 0

    newer = tmp_path / "newer.jsonl"
    header = json.loads(lines[0]) | {"version": VERSION + 1}
    newer.write_text(json.dumps(header) + "\n", encoding="utf-8")
    async with opened(target, embedder) as svc:
        with pytest.raises(ImportFormatError, match="version 3; this memwal-mcp reads up to version 2"):
            await import_file(svc, newer, owner="local")


async def test_a_tombstone_erases_what_an_older_backup_brought_back(embedder: FastEmbedEmbedder, tmp_path: Path):
    async with opened(tmp_path / "a.db", embedder) as svc:
        kept = (await svc.remember("local", "The garage code is 1234", wait_ms=10000)).job
        secret = (await svc.remember("local", SECRET, idempotency_key="k-vault", wait_ms=10000)).job
        await export_memories(svc, tmp_path / "before.jsonl", "local")
        await svc.forget("local", secret.memory_id)
        await export_memories(svc, tmp_path / "after.jsonl", "local")

    target = tmp_path / "b.db"
    async with opened(target, embedder) as svc:
        await import_file(svc, tmp_path / "before.jsonl", owner="local")
        assert (await svc.recall("local", "vault cabinet", limit=1)).hits[0].text == SECRET
        await import_file(svc, tmp_path / "after.jsonl", owner="local")
        await import_file(svc, tmp_path / "before.jsonl", owner="local")  # the old backup again
        await wait_until_embedded(svc, None)
        # min_score=0: every live fact is a candidate, related or not; only the kept one is live.
        assert [h.id for h in (await svc.recall("local", "vault cabinet", limit=5, min_score=0)).hits] == [
            kept.memory_id
        ]
        assert (await svc.history("local", secret.memory_id)).status == "forgotten"
        # The old key left with the forgotten text: used again, it files the new fact.
        again = await svc.remember("local", "The vault moved to the blue cabinet", idempotency_key="k-vault")
        assert not again.replayed and again.job.text == "The vault moved to the blue cabinet"
    for (table,) in rows(target, "SELECT name FROM sqlite_master WHERE type = 'table'"):
        if not table.startswith("memory_vectors_"):
            assert not any("Zyxwvut" in str(v) for row in rows(target, f'SELECT * FROM "{table}"') for v in row), table


class PoisonEmbedder:
    """The real model, except that a batch containing "POISON" cannot be embedded."""

    def __init__(self, inner: FastEmbedEmbedder) -> None:
        self._inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed_documents(self, texts: list[str]) -> Any:
        if any("POISON" in t for t in texts):
            raise RuntimeError("this test model refuses to embed POISON")
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self._inner.embed_query(text)


def hand_made_export(path: Path, bodies: list[str]) -> None:
    lines: list[dict[str, Any]] = [
        {"type": "header", "format": "memwal-export", "version": 1, "exported_at": 1.0e9, "owners": ["local"]},
        {"type": "lane", "owner": "local", "namespace": "default"},
    ]
    for n, body in enumerate(bodies):
        lines.append(
            {
                "type": "job",
                "id": f"j_{n:016x}",
                "owner": "local",
                "namespace": "default",
                "text": body,
                "status": "done",
                "decision": "created",
                "memory_id": f"m_{n:016x}",
                "created_at": 1.0e9 + n,
                "updated_at": 1.0e9 + n,
            }
        )
    for n, body in enumerate(bodies):
        lines.append(
            {
                "type": "memory",
                "id": f"m_{n:016x}",
                "owner": "local",
                "namespace": "default",
                "body": body,
                "status": "live",
                "source_job_id": f"j_{n:016x}",
                "created_at": 1.0e9 + n,
                "updated_at": 1.0e9 + n,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def test_one_body_the_model_refuses_does_not_hold_back_the_other_imported_memories(
    embedder: FastEmbedEmbedder, tmp_path: Path
):
    path = tmp_path / "hand.jsonl"
    hand_made_export(path, ["The boiler is serviced every October", "POISON pill", "The bins go out on Tuesday"])
    svc = MemoryService(load_settings(db_path=tmp_path / "poison.db"), embedder=PoisonEmbedder(embedder))
    async with svc.running():
        await import_file(svc, path, owner="local")
        # The refused body is set aside (not retried on every idle pass); the others get vectors.
        assert await wait_until_embedded(svc, None, stall_s=3) == 0
        marks = dict(
            await svc.store.db.read(
                lambda conn: conn.execute("SELECT body, vector_model FROM memories WHERE status = 'live'").fetchall()
            )
        )
        assert marks["POISON pill"] == "-"
        assert marks["The boiler is serviced every October"] == marks["The bins go out on Tuesday"] != "-"
        found = await svc.recall("local", "POISON pill", limit=1)
        assert found.hits[0].text == "POISON pill"


# --- foreign files ----------------------------------------------------------------

MEMORY_JSON = [
    {
        "type": "entity",
        "name": "John_Smith",
        "entityType": "person",
        "observations": ["Speaks fluent Spanish", "Graduated in 2019"],
    },
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": ["Builds Claude"]},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
]


async def test_memory_json_entities_and_relations_import_once(service: MemoryService, tmp_path: Path):
    path = tmp_path / "memory.json"
    path.write_text("\n".join(json.dumps(item) for item in MEMORY_JSON) + "\n", encoding="utf-8")
    assert detect_kind(path) == "memory-json"
    summary = await import_file(service, path, owner="local", namespace="graph")
    assert summary.kind == "memory-json" and summary.added == {"job": 3} and not summary.failed
    texts = sorted(m.text for m in (await service.list("local", limit=50)).items)
    assert texts == sorted(
        [
            "John_Smith (person)\n- Speaks fluent Spanish\n- Graduated in 2019",
            "Anthropic (organization)\n- Builds Claude",
            "John_Smith works_at Anthropic",
        ]
    )
    hits = (await service.recall("local", "Who speaks Spanish?", limit=1, namespace="graph")).hits
    assert hits[0].text.startswith("John_Smith (person)")
    hits = (await service.recall("local", "where does John Smith work", limit=3, namespace="graph")).hits
    assert "John_Smith works_at Anthropic" in [h.text for h in hits]

    # The running worker counts deferred nominations in the background: drain them first, or
    # that queue shrinks between the two snapshots and the comparison races the worker.
    while await deferred.count_pass(service.store, service.settings.curation):
        pass
    before = table_counts(service.store.db.path)
    again = await import_file(service, path, owner="local", namespace="graph")
    assert again.added == {} and again.skipped == {"job": 3}
    assert table_counts(service.store.db.path) == before
    # Another namespace is another import, not a reused key.
    elsewhere = await import_file(service, path, owner="local", namespace="other")
    assert elsewhere.added == {"job": 3}


async def test_a_malformed_memory_json_line_writes_nothing(service: MemoryService, tmp_path: Path):
    path = tmp_path / "memory.json"
    lines = [json.dumps(MEMORY_JSON[0]), json.dumps({"type": "relation", "from": "A", "to": "B"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"line 2: bad relation: relationType"):
        await import_file(service, path, owner="local")
    assert (await service.list("local")).items == []


MARKDOWN = """\
---
title: notes
---
# Team notes

Deploys go out on Fridays
from us-east-1.

- The user prefers dark roast coffee
- Standup is at 9:30
  every weekday
* Invoices are due within 30 days
1. The VPN needs a restart after updates

Setext titles are skipped
-------------------------

```sh
make deploy
make verify
```
"""


def test_markdown_splits_into_paragraphs_and_bullets():
    assert [(item.line, item.text) for item in text_items(MARKDOWN)] == [
        (6, "Deploys go out on Fridays\nfrom us-east-1."),
        (9, "The user prefers dark roast coffee"),
        (10, "Standup is at 9:30\nevery weekday"),
        (12, "Invoices are due within 30 days"),
        (13, "The VPN needs a restart after updates"),
        (18, "```sh\nmake deploy\nmake verify\n```"),
    ]
    assert [i.text for i in text_items("one\n\n\ntwo\r\n\r\nthree")] == ["one", "two", "three"]


async def test_a_markdown_file_becomes_one_memory_per_paragraph_and_bullet(service: MemoryService, tmp_path: Path):
    path = tmp_path / "notes.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    assert detect_kind(path) == "text"
    summary = await import_file(service, path, owner="local", progress=True)
    assert summary.added == {"job": 6}
    texts = {m.text for m in (await service.list("local", limit=50)).items}
    assert texts == {item.text for item in text_items(MARKDOWN)}
    hits = (await service.recall("local", "when is standup", limit=1)).hits
    assert hits[0].text == "Standup is at 9:30\nevery weekday"
    again = await import_file(service, path, owner="local")
    assert again.added == {} and len((await service.list("local", limit=50)).items) == 6


def test_unrecognized_json_is_refused_rather_than_imported_as_prose(tmp_path: Path):
    path = tmp_path / "data.json"
    path.write_text('{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="Pass --format"):
        detect_kind(path)


# --- the CLI ------------------------------------------------------------------------


def cli(*args: str, db: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWAL_")} | {"MEMWAL_DB_PATH": str(db)}
    done = subprocess.run([str(MEMWAL), *args], capture_output=True, text=True, env=env, timeout=180)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
async def test_cli_export_then_import_end_to_end(source: Source, tmp_path: Path):
    exported = tmp_path / "cli.jsonl"
    done = cli("export", str(exported), "--all-owners", db=source.db)
    assert "exported" in done.stdout and "lane" in done.stdout and done.stderr == ""
    assert records(exported)[0]["owners"] == ["bob", "local"]

    target = tmp_path / "cli-target.db"
    done = cli("import", str(exported), "--all-owners", "--progress", db=target)
    assert done.stdout.startswith("imported memwal file for bob, local: added")
    assert "import: 100%" in done.stderr and "embedding: 100%" in done.stderr
    assert rows(target, "SELECT COUNT(*) FROM memories WHERE status = 'live' AND vector_model IS NULL") == [(0,)]

    def recalled(db: Path) -> list[dict[str, Any]]:
        out = json.loads(cli("recall", "food allergy", "--namespace", "home", "--json", db=db).stdout)
        return [{k: h[k] for k in ("id", "text", "score", "copies")} for h in out["hits"]]

    assert recalled(target) == recalled(source.db)
    again = json.loads(cli("import", str(exported), "--all-owners", "--json", db=target).stdout)
    assert again["added"] == {} and again["unembedded"] == 0

    refused = cli("import", str(exported), db=target, check=False)
    assert refused.returncode == 2 and "--all-owners" in refused.stderr

    notes = tmp_path / "notes.md"
    notes.write_text("- Ship it on Tuesdays\n- Lunch is at noon\n", encoding="utf-8")
    done = cli("--owner", "carol", "import", str(notes), "--namespace", "notes", "--json", db=target)
    assert json.loads(done.stdout)["added"] == {"job": 2} and done.stderr == ""
    out = json.loads(cli("--owner", "carol", "recall", "lunch", "--namespace", "notes", "--json", db=target).stdout)
    assert out["hits"][0]["text"] == "Lunch is at noon"


@pytest.mark.parametrize("value", [True, False])
def test_a_time_that_is_true_or_false_is_refused_not_read_as_1970(value: bool) -> None:
    from pydantic import ValidationError

    from memwal_mcp.transfer.format import JobLine

    job = {
        "id": "j_1",
        "owner": "alice",
        "namespace": "default",
        "text": "x",
        "status": "queued",
        "created_at": 1_700_000_000,
        "updated_at": 1_700_000_000,
    }
    assert JobLine.model_validate(job).created_at == 1_700_000_000.0  # a number of seconds is a time
    with pytest.raises(ValidationError, match="a time must be a number of seconds, not (true|false)"):
        JobLine.model_validate({**job, "expires_at": value})
