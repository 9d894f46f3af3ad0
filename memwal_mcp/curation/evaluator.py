"""The one evaluator: what should happen to a proposal (a queued job) in its lane.

Order (DESIGN.md):
  0. a proposal that supersedes memories -> CREATE, always, with no LLM call: it replaces
     them, so folding it into one (a repeat, a merge, a SKIP) would leave nothing to replace
     them with, and the replacement would be lost (undo of it brings back exactly them);
  1. exact normalized-text match with a live memory -> occurrence (no LLM);
  2. nominees: kNN (cosine >= threshold) with an embedder, FTS5 terms without one
     (the degraded path, marked `curation_nominator_degraded`);
  3. no nominee -> CREATE, zero LLM calls;
  4. nominees and an LLM -> ask it (the worker does, outside the transaction);
  5. nominees and no LLM -> CREATE (`curation_nominee_no_llm_decision`). With a vector the
     outcome is CREATE whatever kNN finds, so the kNN waits: the memory is written (and
     searchable) at once, and its nominees are counted later (`count_later`, see
     curation/deferred.py) -- at 1M memories the scan was most of the no-LLM path's cost.
Similarity alone never folds anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..config import CurationSettings
from ..normalize import norm_key, normalize_text
from ..store import StoreReader, VectorMatch
from .nominator import lexical_nominees, vector_nominees
from .prompt import Nominee

Action = Literal["create", "occurrence", "ask_llm"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    action: Action
    reason: str
    target_rowid: int | None = None
    target_id: str | None = None
    nominees: tuple[Nominee, ...] = ()
    markers: tuple[str, ...] = ()
    count_later: bool = False  # CREATE now; the nominees are counted afterwards (no LLM, a vector)


def evaluate(
    reader: StoreReader,
    lane: int,
    text: str,
    vector: np.ndarray | None,
    settings: CurationSettings,
    llm_available: bool,
    candidates: list[VectorMatch] | None = None,
    supersedes: Sequence[str] = (),
) -> Evaluation:
    if not settings.enabled:
        return Evaluation("create", "curation disabled")
    if supersedes:
        return Evaluation("create", f"supersedes {', '.join(supersedes)}: a memory of its own")
    wanted = normalize_text(text)
    for rowid, memory_id, body in reader.live_by_norm_key(lane, norm_key(text)):
        if normalize_text(body) == wanted:  # the key is a hash: confirm on the text itself
            return Evaluation("occurrence", "exact normalized-text match", rowid, memory_id)

    if vector is not None and not llm_available:
        return Evaluation("create", "no LLM configured; nominees counted later", count_later=True)
    markers: list[str] = []
    if vector is not None:
        nominees = vector_nominees(reader, lane, vector, settings.nominator_k, settings.nominator_threshold, candidates)
    else:
        nominees = lexical_nominees(reader, lane, text)
        markers.append("curation_nominator_degraded")
    if not nominees:
        return Evaluation("create", "no nominee", markers=tuple(markers))
    markers.append("curation_nominated")
    top = max((n.similarity for n in nominees if n.similarity is not None), default=None)
    why = f"{len(nominees)} nominee(s)" + (f", top cosine {top:.3f}" if top is not None else ", lexical")
    if llm_available:
        return Evaluation("ask_llm", why, nominees=tuple(nominees), markers=tuple(markers))
    markers.append("curation_nominee_no_llm_decision")
    return Evaluation("create", f"{why}; no LLM configured", nominees=tuple(nominees), markers=tuple(markers))
