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

from .. import validation
from ..errors import InvalidInput
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


def _checked_body(body: str | None, max_bytes: int) -> tuple[str | None, str | None]:
    """(the merged body, or None; why it was refused). Text from the LLM is untrusted: it is
    held to the policy and the size limit of a remembered text, or it is no body at all."""
    if body is None:
        return None, None
    try:
        return validation.text(body, max_bytes, name="the merged body"), None
    except InvalidInput as exc:
        return None, str(exc)


def _fits(body: str, max_bytes: int) -> bool:
    return len(body.encode("utf-8")) <= max_bytes


def plan_outcome(proposal: str, decision: LLMDecision | None, max_body_bytes: int) -> MergePlan:
    """`max_body_bytes`: the limit on a remembered text, which every stored body keeps."""
    if decision is None:
        return MergePlan(
            "create", "created", "LLM gave no usable decision", markers=("curation_nominee_no_llm_decision",)
        )
    markers = ("curation_llm_decision", f"curation_llm_decision_{decision.action}")
    if decision.action == "create":
        return MergePlan("create", "created", "LLM: a different fact", markers=markers)
    target = decision.targets[0]
    if decision.action == "skip":
        held = check_skip(proposal, target.body)
        if held.passed:
            return MergePlan(
                "skip",
                "skipped",
                "LLM: adds nothing to the target; guard agreed",
                target=target,
                guard=held,
                markers=markers,
            )
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
    merged, refused = _checked_body(decision.merged_body, max_body_bytes)
    guard = check_merge(sources, merged)
    if guard.passed:
        assert merged is not None
        return MergePlan(
            "merge",
            "updated" if decision.action == "update" else "consolidated",
            f"LLM {decision.action}; guard passed: {guard.reason}",
            target=target,
            retire=decision.targets[1:],
            body=merged,
            guard=guard,
            markers=(*markers, "curation_guard_pass"),
        )
    why = refused or f"guard refused the merged body ({guard.reason})"
    appended = append_body(target.body, proposal)
    if not _fits(appended, max_body_bytes):
        # Both texts are within the limit, together they are not: the proposal stands alone.
        return MergePlan(
            "create",
            "created",
            f"LLM {decision.action}; {why}; the dated append would exceed {max_body_bytes} bytes; created instead",
            guard=guard,
            markers=(*markers, "curation_guard_append_too_long"),
        )
    return MergePlan(
        "merge",
        "appended",
        f"LLM {decision.action}; {why}; appended instead",
        target=target,
        body=appended,
        guard=guard,
        markers=(*markers, "curation_guard_append"),
    )
