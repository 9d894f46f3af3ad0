"""The retrieval benchmark harness: metric functions by hand, and main() on a tiny dataset.

The harness runs the real remember path (jobs, curation worker) and the real recall
path over a real SQLite file, with the session's real embedding model.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import retrieval
from benchmarks.dataset import load_dataset
from benchmarks.metrics import ndcg_at_k, percentile, recall_at_k
from memwal_mcp.embedding import FastEmbedEmbedder

ROOT = Path(__file__).resolve().parents[1]
INV_LOG2_3 = 1 / math.log2(3)  # discount at rank 2

# --- metrics ------------------------------------------------------------------------------


def test_recall_at_k_by_hand() -> None:
    ranked = ["a", "x", "b", "y"]
    assert recall_at_k(ranked, ["a", "b"], 1) == 0.5
    assert recall_at_k(ranked, ["a", "b"], 2) == 0.5
    assert recall_at_k(ranked, ["a", "b"], 3) == 1.0
    assert recall_at_k(ranked, ["b", "z"], 10) == 0.5  # never returned: stays missing
    assert recall_at_k(ranked, ["a", "a", "b"], 1) == 0.5  # repeated evidence counts once
    assert recall_at_k([], ["a"], 5) == 0.0


def test_recall_at_k_resolves_dataset_ids_to_facts() -> None:
    # m1 and m2 were folded into one fact F1; m3's job failed (resolves to None).
    resolve = {"m1": "F1", "m2": "F1", "m3": None, "m4": "F4"}
    assert recall_at_k(["F1", "F9"], ["m1", "m2", "m3"], 1, resolve) == pytest.approx(2 / 3)
    assert recall_at_k(["F9", "F4"], ["m4"], 1, resolve) == 0.0
    assert recall_at_k(["F9", "F4"], ["m4"], 2, resolve) == 1.0
    assert recall_at_k(["F1"], ["m1"], 1, resolve.get) == 1.0  # a callable works too


def test_ndcg_at_k_by_hand() -> None:
    # Relevant at ranks 1 and 3: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3).
    assert ndcg_at_k(["a", "x", "b"], ["a", "b"], 3) == pytest.approx(1.5 / (1 + INV_LOG2_3))
    assert ndcg_at_k(["a", "x", "b"], ["a", "b"], 3) == pytest.approx(0.919720, abs=1e-6)
    # At k=1 the ideal list holds one relevant item.
    assert ndcg_at_k(["a", "x", "b"], ["a", "b"], 1) == 1.0
    assert ndcg_at_k(["x", "a"], ["a"], 1) == 0.0
    assert ndcg_at_k(["x", "a"], ["a"], 2) == pytest.approx(INV_LOG2_3)
    assert ndcg_at_k(["b", "a"], ["a", "b"], 2) == pytest.approx(1.0)
    assert ndcg_at_k([], ["a"], 3) == 0.0
    # A relevant item repeated in the ranking earns its gain once.
    assert ndcg_at_k(["a", "a"], ["a", "b"], 2) == pytest.approx(1 / (1 + INV_LOG2_3))


def test_ndcg_at_k_with_folded_and_missing_evidence() -> None:
    resolve = {"m1": "F1", "m2": "F1", "m3": None}
    # m1 and m2 are one fact: the ideal list holds one item, found at rank 1.
    assert ndcg_at_k(["F1", "F9"], ["m1", "m2"], 5, resolve) == 1.0
    # m3 was never stored: it still counts as a relevant fact the ranking lacks.
    assert ndcg_at_k(["F1"], ["m1", "m3"], 2, resolve) == pytest.approx(1 / (1 + INV_LOG2_3))


def test_metrics_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        recall_at_k(["a"], [], 1)
    with pytest.raises(ValueError):
        ndcg_at_k(["a"], ["a"], 0)


def test_percentile_matches_numpy() -> None:
    samples = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 30.0]
    for q in (0, 50, 95, 100):
        assert percentile(samples, q) == pytest.approx(float(np.percentile(samples, q)))
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10.0], 95) == 10.0
    assert math.isnan(percentile([], 50))


# --- arguments -------------------------------------------------------------------------------


def test_arguments_accept_lists_and_repeats() -> None:
    args = retrieval.parse_args(
        ["--data", "x.jsonl", "--k", "10,1", "--k", "5", "--mode", "lexical,hybrid", "--mode", "dense"]
    )
    assert args.ks == [1, 5, 10]
    assert args.modes == ["lexical", "hybrid", "dense"]
    defaults = retrieval.parse_args(["--data", "x.jsonl"])
    assert defaults.ks == [1, 5, 10, 25] and defaults.modes == ["dense", "lexical", "hybrid"]
    assert defaults.curation == "off"
    with pytest.raises(SystemExit):
        retrieval.parse_args(["--data", "x.jsonl", "--mode", "sparse"])
    with pytest.raises(SystemExit):
        retrieval.parse_args(["--data", "x.jsonl", "--k", "0"])


def test_layout_argument_and_its_one_owner_alias() -> None:
    assert retrieval.parse_args(["--data", "x.jsonl"]).layout == "owners"
    assert retrieval.parse_args(["--data", "x.jsonl", "--layout", "namespaces"]).layout == "namespaces"
    assert retrieval.parse_args(["--data", "x.jsonl", "--one-owner"]).layout == "one-lane"
    assert retrieval.parse_args(["--data", "x.jsonl", "--layout", "one-lane"]).layout == "one-lane"
    with pytest.raises(SystemExit):
        retrieval.parse_args(["--data", "x.jsonl", "--layout", "lanes"])
    with pytest.raises(SystemExit):
        retrieval.parse_args(["--data", "x.jsonl", "--layout", "namespaces", "--one-owner"])


# --- the harness end to end ----------------------------------------------------------------------

TINY = [
    {
        "type": "memory",
        "id": "m1",
        "owner": "o1",
        "text": "The staging database listens on port 5433",
        "occurred_at": "2024-05-01T09:00:00Z",
    },
    {"type": "memory", "id": "m2", "owner": "o1", "text": "Priya adopted a corgi named Biscuit in April"},
    # Related to m2 (recall returns relevant facts only), but not rank 1 for m2's query.
    {"type": "memory", "id": "m3", "owner": "o1", "text": "Biscuit the corgi sleeps under Priya's desk at work"},
    {"type": "memory", "id": "m4", "owner": "o1", "text": "Lucía plays the violin"},
    {"type": "memory", "id": "m5", "owner": "o1", "text": "lucía  plays the VIOLIN"},  # same normalized text as m4
    {"type": "memory", "id": "m6", "owner": "o2", "text": "User prefers dark roast coffee"},
    {"type": "memory", "id": "m7", "owner": "o2", "text": "User does NOT want emails on weekends"},
    {"type": "memory", "id": "m8", "owner": "o2", "text": "The NAS lives at 192.168.1.41", "namespace": "home"},
    # Each query's first evidence is an exact copy of the query: rank 1 by cosine similarity.
    {
        "type": "query",
        "id": "exact",
        "owner": "o1",
        "query": "The staging database listens on port 5433",
        "evidence": ["m1"],
    },
    {
        "type": "query",
        "id": "half",
        "owner": "o1",
        "query": "Priya adopted a corgi named Biscuit in April",
        "evidence": ["m2", "m3"],
    },
    {"type": "query", "id": "dup", "owner": "o1", "query": "Lucía plays the violin", "evidence": ["m4", "m5"]},
    {"type": "query", "id": "ns", "owner": "o2", "query": "The NAS lives at 192.168.1.41", "evidence": ["m8"]},
    # Evidence of another owner can never be found: the query is dropped, not scored.
    {"type": "query", "id": "wall", "owner": "o2", "query": "Lucía plays the violin", "evidence": ["m4"]},
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in TINY), encoding="utf-8")
    return path


def _run(tmp_path: Path, data: Path, embedder: FastEmbedEmbedder, *extra: str) -> dict:
    out = tmp_path / f"result-{len(list(tmp_path.glob('result-*')))}.json"
    argv = ["--data", str(data), "--k", "1,10", "--json-out", str(out), "--per-query", *extra]
    code = retrieval.main(argv, embedder=embedder, configure_logging=False)
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_harness_scores_known_answers_in_dense_mode(
    tiny: Path, tmp_path: Path, embedder: FastEmbedEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _run(tmp_path, tiny, embedder, "--mode", "dense")
    stdout = capsys.readouterr().out

    assert report["memories"] == 8 and report["owners"] == 2 and report["queries"] == 4
    assert report["load"]["jobs"] == 8 and report["load"]["failed"] == 0
    # m4 and m5 are one fact (collapsed on read with curation off).
    assert report["load"]["distinct_facts"] == 7
    rows = {row["id"]: row for row in report["per_query"]["dense"]}
    assert set(rows) == {"exact", "half", "dup", "ns"}

    assert rows["exact"]["evidence_rank"] == {"m1": 1}
    assert rows["exact"]["recall@1"] == 1.0 and rows["exact"]["ndcg@1"] == 1.0
    # Two evidence items, one of them the query itself: half found at k=1, all at k=10 (4 facts in o1).
    half = rows["half"]
    assert half["evidence_rank"]["m2"] == 1
    assert half["recall@1"] == 0.5 and half["recall@10"] == 1.0 and half["ndcg@1"] == 1.0
    other = half["evidence_rank"]["m3"]
    assert 2 <= other <= 4
    assert half["ndcg@10"] == pytest.approx((1 + 1 / math.log2(other + 1)) / (1 + INV_LOG2_3), abs=1e-4)
    # Both copies of the collapsed fact are credited by the one hit that stands for them.
    assert rows["dup"]["evidence_rank"] == {"m4": 1, "m5": 1}
    assert rows["dup"]["recall@1"] == 1.0 and rows["dup"]["ndcg@1"] == 1.0
    # No namespace on the query: the harness searches the evidence's namespace.
    assert rows["ns"]["evidence_rank"] == {"m8": 1}

    dense = report["results"]["dense"]
    assert dense["queries"] == 4
    assert dense["recall@1"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert dense["recall@10"] == 1.0
    assert dense["ndcg@1"] == 1.0
    assert dense["latency_ms"]["p50"] > 0 and dense["latency_ms"]["p95"] >= dense["latency_ms"]["p50"]

    # The table is on stdout, the JSON went to the file only.
    assert "R@1" in stdout and "nDCG@10" in stdout and "p95 ms" in stdout
    assert "\ndense " in stdout
    assert '"results"' not in stdout


def test_harness_with_curation_on_and_every_mode(tiny: Path, tmp_path: Path, embedder: FastEmbedEmbedder) -> None:
    report = _run(tmp_path, tiny, embedder, "--curation", "on")

    assert report["curation"] == "on"
    assert report["modes"] == ["dense", "lexical", "hybrid"]
    assert set(report["results"]) == {"dense", "lexical", "hybrid"}
    # With curation on, m5 is folded into m4's memory at write time.
    assert report["load"]["decisions"].get("occurrence") == 1
    assert report["load"]["distinct_facts"] == 7
    dense = {row["id"]: row for row in report["per_query"]["dense"]}
    assert dense["dup"]["evidence_rank"] == {"m4": 1, "m5": 1}
    assert report["results"]["dense"]["recall@1"] == pytest.approx(0.875)
    for mode in ("lexical", "hybrid"):
        summary = report["results"][mode]
        assert summary["queries"] == 4
        assert 0.0 <= summary["recall@1"] <= summary["recall@10"] <= 1.0
        assert 0.0 <= summary["ndcg@1"] <= 1.0


@pytest.mark.slow
def test_queries_as_mcp_tool_calls_rank_as_in_process(tiny: Path, tmp_path: Path, embedder: FastEmbedEmbedder) -> None:
    """--via stdio: each query is a memwal_recall call through the mcp client to a memwal-mcp
    subprocess per owner; the ranks and scores are the in-process ones."""
    in_process = _run(tmp_path, tiny, embedder, "--mode", "hybrid")
    over_stdio = _run(tmp_path, tiny, embedder, "--mode", "hybrid", "--via", "stdio")

    assert over_stdio["via"] == "stdio" and in_process["via"] == "service"
    ours = {row["id"]: row for row in in_process["per_query"]["hybrid"]}
    theirs = {row["id"]: row for row in over_stdio["per_query"]["hybrid"]}
    assert set(theirs) == {"exact", "half", "dup", "ns"}  # o2's "ns" went to o2's own server
    for query_id, row in theirs.items():
        assert row["evidence_rank"] == ours[query_id]["evidence_rank"]
        assert row["top_score"] == pytest.approx(ours[query_id]["top_score"], abs=1e-6)
    assert over_stdio["results"]["hybrid"]["recall@10"] == in_process["results"]["hybrid"]["recall@10"] == 1.0


def test_namespaces_layout_keeps_each_unit_apart_in_process_and_over_stdio(
    tiny: Path, tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    """--layout namespaces: one owner, each unit (o1, o2, o2's "home") its own namespace; a query
    sees only its unit's facts, whether it runs in-process or as a memwal_recall tool call."""
    in_process = _run(tmp_path, tiny, embedder, "--mode", "hybrid", "--layout", "namespaces")
    over_stdio = _run(tmp_path, tiny, embedder, "--mode", "hybrid", "--layout", "namespaces", "--via", "stdio")

    unit_texts = {
        "o1": {m["text"].casefold() for m in TINY if m["type"] == "memory" and m["owner"] == "o1"},
        "o2": {
            m["text"].casefold() for m in TINY if m["type"] == "memory" and m["owner"] == "o2" and "namespace" not in m
        },
        "o2:home": {m["text"].casefold() for m in TINY if m["type"] == "memory" and m.get("namespace") == "home"},
    }
    unit_of = {"exact": "o1", "half": "o1", "dup": "o1", "ns": "o2:home"}
    for report in (in_process, over_stdio):
        assert report["layout"] == "namespaces" and report["owners"] == 1 and report["lanes"] == 3
        rows = {row["id"]: row for row in report["per_query"]["hybrid"]}
        assert set(rows) == set(unit_of)
        for query_id, row in rows.items():
            assert row["owner"] == "everyone"
            assert row["top_hits"] and set(row["top_hits"]) <= unit_texts[unit_of[query_id]], query_id
        assert report["results"]["hybrid"]["recall@10"] == 1.0
    ours = {row["id"]: row["evidence_rank"] for row in in_process["per_query"]["hybrid"]}
    assert {row["id"]: row["evidence_rank"] for row in over_stdio["per_query"]["hybrid"]} == ours


# --- the committed development set ---------------------------------------------------------------


def _script(name: str):
    """A benchmarks/data/make_*.py script, imported as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "data" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_dev_dataset_is_built_by_make_dev_and_big_enough() -> None:
    make_dev = _script("make_dev")
    committed = (ROOT / "benchmarks" / "data" / "dev.jsonl").read_text(encoding="utf-8")
    assert committed == make_dev.render(), "dev.jsonl is stale: run python benchmarks/data/make_dev.py"

    dataset = load_dataset(ROOT / "benchmarks" / "data" / "dev.jsonl")
    raw_queries = sum(1 for line in committed.splitlines() if '"type": "query"' in line)
    assert len(dataset.queries) == raw_queries  # every query's evidence exists, with the right owner
    assert len(dataset.memories) >= 300 and len(dataset.queries) >= 100 and len(dataset.owners) >= 4
    turns = [m for m in dataset.memories if ' said, "' in m.text]
    assert len(turns) / len(dataset.memories) >= 0.5
    assert all(m.occurred_at for m in turns)


def test_messaging_set_is_built_by_make_messaging_and_shaped_like_a_texting_log() -> None:
    """Eight chats of 600-900 messages over three weeks, 60-80 questions each, every question's
    evidence in the file; the script builds the committed file byte for byte (it is seeded), and
    refuses a paraphrase question that shares a content word with its evidence."""
    path = ROOT / "benchmarks" / "data" / "messaging.jsonl"
    committed = path.read_text(encoding="utf-8")
    assert committed == _script("make_messaging").render(), "messaging.jsonl is stale: run its make_messaging.py"
    assert len(committed.encode()) < 1_000_000

    dataset = load_dataset(path)
    assert len(dataset.queries) == sum(1 for line in committed.splitlines() if '"type": "query"' in line)
    assert len(dataset.owners) == 8
    for owner in dataset.owners:
        turns = [m for m in dataset.memories if m.owner == owner]
        assert 600 <= len(turns) <= 900, owner
        assert all(m.occurred_at and re.match(r"^[A-Z][a-z]+: ", m.text) for m in turns), owner
        days = {m.occurred_at[:10] for m in turns if m.occurred_at}
        assert 19 <= len(days) <= 22, owner
        assert 60 <= sum(1 for q in dataset.queries if q.owner == owner) <= 80, owner
    assert {q.category for q in dataset.queries} == {"single-hop", "multi-hop", "temporal", "adversarial", "paraphrase"}


def test_agent_facts_set_is_built_by_make_agent_facts_and_keeps_changes_dated() -> None:
    """Six units of about 250 facts and 60 questions each; the seeded script builds the committed
    file byte for byte (and refuses a paraphrase question that shares a content word with its
    evidence); a negation question's evidence says what is not done."""
    path = ROOT / "benchmarks" / "data" / "agent_facts.jsonl"
    committed = path.read_text(encoding="utf-8")
    assert committed == _script("make_agent_facts").render(), "agent_facts.jsonl is stale: run make_agent_facts.py"
    assert len(committed.encode()) < 1_000_000

    dataset = load_dataset(path)
    assert len(dataset.queries) == sum(1 for line in committed.splitlines() if '"type": "query"' in line)
    assert len(dataset.owners) == 6
    for owner in dataset.owners:
        assert 220 <= sum(1 for m in dataset.memories if m.owner == owner) <= 280, owner
        assert 55 <= sum(1 for q in dataset.queries if q.owner == owner) <= 65, owner
    assert {q.category for q in dataset.queries} == {
        "paraphrase",
        "name",
        "number",
        "date",
        "negation",
        "update",
        "multi-hop",
    }
    assert all(m.occurred_at for m in dataset.memories)
    texts = {m.id: m.text for m in dataset.memories}
    negations = [q for q in dataset.queries if q.category == "negation"]
    assert all(
        re.search(r"\b(not|never|no|nobody)\b|n't\b", " ".join(texts[e] for e in q.evidence), re.I) for q in negations
    )


@pytest.mark.parametrize("name", ["conversations", "long_chats_a", "long_chats_b", "filler_chats"])
def test_committed_conversation_sets_load_whole(name: str) -> None:
    """The hand-written check sets: every query kept (its evidence exists, with its owner), turn-level
    memories with their session dates, and the categories the README reports on."""
    path = ROOT / "benchmarks" / "data" / f"{name}.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    dataset = load_dataset(path)
    assert len(dataset.queries) == sum(1 for line in raw if line["type"] == "query") >= 120
    assert len(dataset.memories) >= 650
    assert all(' said, "' in m.text and m.occurred_at for m in dataset.memories)
    assert {q.category for q in dataset.queries} == {"single-hop", "multi-hop", "temporal", "inference"}


def test_namespaces_layout_gives_each_unit_its_namespace() -> None:
    dataset = load_dataset(ROOT / "benchmarks" / "data" / "dev.jsonl")
    spread = dataset.as_namespaces()
    assert {m.owner for m in spread.memories} == {q.owner for q in spread.queries} == {"everyone"}
    # A unit's own namespaces stay apart inside its namespace ("agent-dev:atlas").
    assert {m.namespace for m in spread.memories} == {
        m.owner if m.namespace is None else f"{m.owner}:{m.namespace}" for m in dataset.memories
    }
    assert "agent-dev:atlas" in {m.namespace for m in spread.memories}
    where = {m.id: m.namespace for m in spread.memories}
    for query in spread.queries:
        assert {where[item] for item in query.evidence} == {query.namespace}, query.id


def test_one_owner_puts_every_memory_and_query_in_one_lane() -> None:
    dataset = load_dataset(ROOT / "benchmarks" / "data" / "dev.jsonl")
    merged = dataset.as_one_owner()
    assert {m.owner for m in merged.memories} == {q.owner for q in merged.queries} == {"everyone"}
    assert [m.id for m in merged.memories] == [m.id for m in dataset.memories]
    assert [q.evidence for q in merged.queries] == [q.evidence for q in dataset.queries]
    assert len(dataset.owners) > 1
