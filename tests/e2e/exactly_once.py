"""Bursts of remembers through servers that get SIGKILLed, and what must hold afterwards.

The facts, and the check that every acknowledged job was applied exactly once, straight from
the database, are shared by the two-process crash test (tests/e2e/test_crash.py) and the
three-replica test on PostgreSQL (tests/postgres/test_replicas.py).
"""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memwal_mcp.normalize import normalize_text
from tests.databases import Database

from .conftest import MEMWAL

_WHO = ("Ana", "Bilal", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lea")
_WHAT = ("prefers", "deploys", "reviews", "owns", "migrates", "benchmarks", "documents", "monitors", "rotates")
_THING = (
    "the billing API",
    "Kafka topics",
    "the Postgres 16 cluster",
    "nightly backups",
    "TLS certificates",
    "the iOS release",
    "feature flags",
    "the Grafana dashboards",
    "Terraform modules",
    "the search index",
)
_WHEN = ("on Mondays", "every sprint", "before 10:00 UTC", "after each incident", "in us-east-1", "from the CLI")


@dataclass(frozen=True)
class Request:
    index: int
    text: str
    namespace: str
    key: str | None
    shared: bool = False  # sent to two servers

    def arguments(self) -> dict[str, Any]:
        arguments: dict[str, Any] = {"text": self.text, "namespace": self.namespace}
        if self.key is not None:
            arguments["idempotency_key"] = self.key
        return arguments


def fact(rng: random.Random, number: int) -> str:
    """A team fact; facts about one person and thing are near each other, so curation nominates."""
    return (
        f"{rng.choice(_WHO)} {rng.choice(_WHAT)} {rng.choice(_THING)} {rng.choice(_WHEN)} "
        f"(ticket OPS-{number:04d}, {rng.choice(_WHO).lower()}-{rng.randrange(10**6):06d})"
    )


def check_clean(env: Mapping[str, str]) -> None:
    """`memwal-mcp check` finds nothing wrong with the store."""
    check = subprocess.run([str(MEMWAL), "check", "--json"], env=dict(env), capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["ok"] is True


def check_exactly_once(
    db: Database, handed: Sequence[tuple[Request, str]], distinct: Collection[tuple[str, str]]
) -> dict[str, tuple[Any, ...]]:
    """Every job id a client was handed is in the journal once, done, with a memory, and holds
    what its request sent; one key is one job; memories and occurrences agree with the journal
    (one memory per fact per namespace, made by one 'created' job, every other job of that fact
    an occurrence of it, none lost, none doubled); `distinct` (namespace, text) are the facts.

    Returns the jobs no client was handed (status, decision, memory id, key, namespace, text),
    each curated like any other, for the caller to say which it allows."""
    accepted = {job_id for _, job_id in handed}
    jobs = {
        row[0]: row[1:]
        for row in db.rows(
            "SELECT id, status, decision, memory_id, idempotency_key, namespace, text FROM remember_jobs"
        )
    }
    rows_per_id = Counter(row[0] for row in db.rows("SELECT id FROM remember_jobs"))
    assert all(rows_per_id[job_id] == 1 for job_id in accepted)
    for job_id, (status, decision, memory_id, *_) in jobs.items():
        assert status == "done" and memory_id and decision in ("created", "occurrence"), (job_id, jobs[job_id])
    for request, job_id in handed:
        _, _, _, key, namespace, text = jobs[job_id]
        assert (namespace, text, key) == (request.namespace, request.text, request.key), (request, jobs[job_id])

    # One key, one job, whichever server was asked and however often.
    keyed = Counter(row[3] for row in jobs.values() if row[3] is not None)
    assert keyed and max(keyed.values()) == 1
    by_key: dict[str, set[str]] = {}
    for request, job_id in handed:
        if request.key is not None:
            by_key.setdefault(request.key, set()).add(job_id)
    assert all(len(ids) == 1 for ids in by_key.values()), {k: v for k, v in by_key.items() if len(v) > 1}

    memories = {
        row[0]: row[1:]
        for row in db.rows("SELECT id, source_job_id, occurrences, namespace, body, status FROM memories")
    }
    assert all(row[4] == "live" for row in memories.values())
    created = {job_id: row[2] for job_id, row in jobs.items() if row[1] == "created"}
    assert sorted(created.values()) == sorted(memories), "a memory per 'created' job, and no other"
    by_memory: dict[str, list[tuple[Any, ...]]] = {}
    for row in jobs.values():
        by_memory.setdefault(row[2], []).append(row)
    for memory_id, (source, occurrences, namespace, body, _) in memories.items():
        assert created.get(source) == memory_id, (memory_id, source)
        folded = by_memory[memory_id]
        assert occurrences == len(folded) - 1, (memory_id, occurrences, len(folded))
        assert sum(1 for row in folded if row[1] == "occurrence") == occurrences
        for row in folded:
            assert row[4] == namespace and normalize_text(row[5]) == normalize_text(body), (memory_id, row)
    facts = Counter((namespace, normalize_text(body)) for _, _, namespace, body, _ in memories.values())
    assert max(facts.values()) == 1, [fact for fact, n in facts.items() if n > 1][:5]
    assert set(facts) == {(ns, normalize_text(text)) for ns, text in distinct}
    assert len(jobs) == len(memories) + sum(row[1] for row in memories.values())
    return {job_id: row for job_id, row in jobs.items() if job_id not in accepted}
