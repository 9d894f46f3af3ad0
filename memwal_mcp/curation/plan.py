"""Turn an LLM decision into a write plan, with MergeGuard deciding merge vs append.

Pure: no I/O. UPDATE / CONSOLIDATE bodies that keep every load-bearing token and
content word of their sources pass and replace the target's body (the old one becomes
a revision); anything else -- a failing body or none at all -- appends the proposal to
the target, dated. A SKIP passes only when the target already says all the proposal
says; otherwise the proposal is created as its own memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .merge_guard import GuardResult, append_body, check_merge, check_skip
from .prompt import LLMDecision, Nominee


@dataclass(frozen=True, slots=True)
class MergePlan:
    kind: Literal["create", "skip", "merge"]
    decision: str  # what the job's record says: created / skipped / updated / consolidated / appended
    reason: str
    target: Nominee | None = None
    retire: tuple[Nominee, ...] = ()
    body: str | None = None
    guard: GuardResult | None = None
    markers: tuple[str, ...] = ()


def plan_outcome(proposal: str, decision: LLMDecision | None) -> MergePlan:
    if decision is None:
        return MergePlan("create", "created", "LLM gave no usable decision", markers=("curation_nominee_no_llm_decision",))
    markers = ("curation_llm_decision", f"curation_llm_decision_{decision.action}")
    if decision.action == "create":
        return MergePlan("create", "created", "LLM: a different fact", markers=markers)
    target = decision.targets[0]
    if decision.action == "skip":
        held = check_skip(proposal, target.body)
        if held.passed:
            return MergePlan("skip", "skipped", "LLM: adds nothing to the target; guard agreed", target=target,
                             guard=held, markers=markers)
        # Refused, the proposal is created rather than appended: the LLM said "the same fact"
        # and was shown wrong, and a wrong LLM answer means CREATE; the proposal keeps its own
        # vector, so a query for what it adds finds it by meaning too; and no memory is
        # rewritten on the strength of a judgement just refuted.
        return MergePlan(
            "create",
            "created",
            f"LLM skip refused: the target lacks {', '.join(held.missing[:5])}; created instead",
            guard=held,
            markers=(*markers, "curation_guard_skip_refused"),
        )
    sources = [nominee.body for nominee in decision.targets] + [proposal]
    guard = check_merge(sources, decision.merged_body)
    if guard.passed:
        assert decision.merged_body is not None
        return MergePlan(
            "merge",
            "updated" if decision.action == "update" else "consolidated",
            f"LLM {decision.action}; guard passed: {guard.reason}",
            target=target,
            retire=decision.targets[1:],
            body=decision.merged_body,
            guard=guard,
            markers=(*markers, "curation_guard_pass"),
        )
    return MergePlan(
        "merge",
        "appended",
        f"LLM {decision.action}; guard refused the merged body ({guard.reason}); appended instead",
        target=target,
        body=append_body(target.body, proposal),
        guard=guard,
        markers=(*markers, "curation_guard_append"),
    )
