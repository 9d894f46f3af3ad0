"""The benchmark's input format: one JSON object per line, memories and queries.

    {"type": "memory", "id": "m1", "owner": "o1", "text": "...", "occurred_at": "...", "namespace": "..."}
    {"type": "query", "owner": "o1", "query": "...", "evidence": ["m1", "m7"], "id": "...", "namespace": "...", "category": "..."}

`occurred_at` and `namespace` are optional on memories; `id`, `namespace` and
`category` are optional on queries. Unknown fields are ignored. Blank lines are
skipped. Errors name the line.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

log = logging.getLogger(__name__)


class DatasetError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    owner: str
    text: str
    namespace: str | None = None
    occurred_at: str | None = None


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    owner: str
    query: str
    evidence: tuple[str, ...]
    namespace: str | None = None
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    memories: list[Memory]
    queries: list[Query]

    @property
    def owners(self) -> list[str]:
        return list(dict.fromkeys(m.owner for m in self.memories))

    def as_one_owner(self, owner: str = "everyone") -> Dataset:
        """Every memory and query under one owner: one bigger lane, whose BM25 statistics
        cover all the memories and whose kNN meets every other conversation as distractors."""
        return Dataset(
            [replace(m, owner=owner) for m in self.memories], [replace(q, owner=owner) for q in self.queries]
        )

    def as_namespaces(self, owner: str = "everyone") -> Dataset:
        """Every memory and query under one owner, each conversation unit (the file's owner) in
        its own namespace, and each query recalled in its unit's namespace: what a user who keeps
        several projects apart by namespace gets. Its figures should equal the owners layout's,
        since a namespace is as much a wall for recall as an owner; where they differ, recall
        lets the other namespaces in (their word statistics, or their rows crowding the kNN)."""
        return Dataset(
            [replace(m, owner=owner, namespace=unit_namespace(m.owner, m.namespace)) for m in self.memories],
            [replace(q, owner=owner, namespace=unit_namespace(q.owner, q.namespace)) for q in self.queries],
        )


def unit_namespace(unit: str, namespace: str | None) -> str:
    """The namespace a unit's memory lands in under the namespaces layout: the unit's name,
    followed by the memory's own namespace when it has one other than the default, so that a
    unit's namespaces stay apart as they were (`agent-dev` and `agent-dev:atlas`)."""
    return unit if namespace in (None, "default") else f"{unit}:{namespace}"


def _optional(obj: dict, field: str, where: str) -> str | None:
    value = obj.get(field)
    if value is not None and not isinstance(value, str):
        raise DatasetError(f"{where}: {field!r} must be a string, got {value!r}")
    return value


def _string(obj: dict, field: str, where: str) -> str:
    value = obj.get(field)
    if value is None:
        raise DatasetError(f"{where}: missing {field!r}")
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: {field!r} must be a non-empty string, got {value!r}")
    return value


def load_dataset(path: Path) -> Dataset:
    """Parse and check a dataset file. Queries whose evidence cannot be found are dropped with a warning."""
    memories: list[Memory] = []
    raw_queries: list[tuple[str, dict]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{where}: not JSON ({exc})") from exc
            if not isinstance(obj, dict):
                raise DatasetError(f"{where}: expected a JSON object")
            kind = obj.get("type")
            if kind == "memory":
                memories.append(
                    Memory(
                        id=_string(obj, "id", where),
                        owner=_string(obj, "owner", where),
                        text=_string(obj, "text", where),
                        namespace=_optional(obj, "namespace", where),
                        occurred_at=_optional(obj, "occurred_at", where),
                    )
                )
            elif kind == "query":
                raw_queries.append((where, obj))
            else:
                raise DatasetError(f"{where}: 'type' must be 'memory' or 'query', got {kind!r}")

    duplicates = [mid for mid, count in Counter(m.id for m in memories).items() if count > 1]
    if duplicates:
        raise DatasetError(f"{path}: memory ids must be unique; repeated: {', '.join(sorted(duplicates)[:10])}")
    by_id = {m.id: m for m in memories}

    queries: list[Query] = []
    for index, (where, obj) in enumerate(raw_queries, start=1):
        owner = _string(obj, "owner", where)
        text = _string(obj, "query", where)
        evidence = obj.get("evidence")
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise DatasetError(f"{where}: 'evidence' must be a list of memory ids")
        query_id = obj.get("id")
        query_id = str(query_id) if query_id is not None else f"q{index}"
        kept: list[str] = []
        for item in dict.fromkeys(evidence):
            memory = by_id.get(item)
            if memory is None:
                log.warning("%s: query %s: evidence %r is not a memory in the file; ignored", where, query_id, item)
            elif memory.owner != owner:
                log.warning(
                    "%s: query %s: evidence %r belongs to owner %r, not %r; ignored (owners are walls)",
                    where,
                    query_id,
                    item,
                    memory.owner,
                    owner,
                )
            else:
                kept.append(item)
        if not kept:
            log.warning("%s: query %s has no usable evidence; skipped", where, query_id)
            continue
        namespace = _optional(obj, "namespace", where)
        if namespace is None:
            # No namespace given: search where the evidence lives (if it all lives in one).
            spaces = {by_id[item].namespace or "default" for item in kept}
            if len(spaces) > 1:
                log.warning(
                    "%s: query %s: evidence spans namespaces %s and no namespace is given; searching 'default'",
                    where,
                    query_id,
                    sorted(spaces),
                )
            namespace = spaces.pop() if len(spaces) == 1 else None
        category = obj.get("category")
        queries.append(Query(query_id, owner, text, tuple(kept), namespace, str(category) if category else None))
    if not memories:
        raise DatasetError(f"{path}: no memories")
    if not queries:
        raise DatasetError(f"{path}: no usable queries")
    return Dataset(memories, queries)
