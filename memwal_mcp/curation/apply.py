"""Apply curation outcomes to the store, one job per transaction, in arrival order.

Runs on the database's writer thread. Each job's evaluate + apply + mark-done
commits together, after renewing the lane lease inside the same transaction: a
worker that lost its lease stops before writing, so two workers never curate one
lane at once, and a crash leaves every job either done once or still queued.
Because each job commits before the next is evaluated, a proposal can nominate
memories created earlier in the same batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from ..config import CurationSettings
from ..errors import StoreBusy
from ..normalize import norm_key
from ..store import StoreReader, StoreWriter, VectorMatch
from ..store.records import JobWithdrawn, QueuedJob
from .evaluator import Evaluation, evaluate
from .nominator import nearest_each
from .plan import MergePlan

log = logging.getLogger("memwal_mcp.curation")


class LeaseLost(Exception):
    """Another worker owns the lane now; stop without writing."""


def _renew(writer: StoreWriter, lane: int, holder: str, hold_s: float) -> None:
    if not writer.renew_lease(lane, holder, time.time() + hold_s):
        raise LeaseLost(f"lease on lane {lane} lost")


def log_markers(markers: Sequence[str], job_id: str, memory_id: str, reason: str) -> None:
    for marker in markers:
        log.info("%s job=%s memory=%s reason=%s", marker, job_id, memory_id, reason)


def _create(
    writer: StoreWriter, job: QueuedJob, vector: np.ndarray | None, model_id: str | None, now: float
) -> tuple[str, list[str]]:
    return _create_row(writer, job, vector, model_id, now)[1:]


def _create_row(
    writer: StoreWriter, job: QueuedJob, vector: np.ndarray | None, model_id: str | None, now: float
) -> tuple[int, str, list[str]]:
    rowid, memory_id = writer.create_memory(
        owner=job.owner,
        namespace=job.namespace,
        lane=job.lane_id,
        body=job.text,
        key=norm_key(job.text),
        source_job_id=job.id,
        vector=vector,
        model_id=model_id,
        now=now,
        occurred_at=job.occurred_at,
        created_at=job.created_at,
    )
    return rowid, memory_id, ["curation_created"] + ([] if vector is not None else ["curation_created_without_vector"])


def curate_until_llm(
    writer: StoreWriter,
    *,
    lane: int,
    holder: str,
    settings: CurationSettings,
    llm_hold_s: float,
    batch: Sequence[QueuedJob],
    vectors: dict[str, np.ndarray],
    model_id: str | None,
    llm_available: bool,
    nearest: dict[str, list[VectorMatch]] | None = None,
) -> tuple[int, Evaluation | None]:
    """Curate jobs in order until one needs the LLM.

    One transaction for the run (the lease renewed inside it), one savepoint per job: a
    job that fails is rolled back alone and rescheduled, and the others commit together
    -- far fewer WAL writes than a commit per job. Returns how many jobs were consumed
    (done, or failed and rescheduled) and, when it stopped early, the evaluation of the
    job at that index (with its nominees). `nearest`: each job's kNN over the lane, found
    before the transaction (see CurationWorker); without it they are found here.
    """
    logged: list[tuple[list[str], str, str, str]] = []
    stopped: tuple[int, Evaluation] | None = None
    with writer.transaction():
        _renew(writer, lane, holder, settings.lease_s)
        nominate = (
            _BatchNominations(writer, lane, batch, vectors, settings, nearest)
            if settings.enabled and llm_available
            else None
        )
        for index, job in enumerate(batch):
            try:
                with writer.savepoint():
                    candidates = nominate.candidates(job.id) if nominate else None
                    evaluation = evaluate(
                        writer,
                        lane,
                        job.text,
                        vectors.get(job.id),
                        settings,
                        llm_available,
                        candidates,
                        job.supersedes,
                    )
                    if evaluation.action == "ask_llm":
                        _renew(writer, lane, holder, llm_hold_s)  # keep the lane while the LLM thinks
                        stopped = (index, evaluation)
                        break
                    now = time.time()
                    if evaluation.action == "occurrence":
                        assert evaluation.target_rowid is not None and evaluation.target_id is not None
                        writer.add_occurrence(evaluation.target_rowid, now)
                        memory_id, markers = evaluation.target_id, ["curation_occurrence"]
                        decision = "occurrence"
                    else:
                        rowid, memory_id, markers = _create_row(writer, job, vectors.get(job.id), model_id, now)
                        decision = "created"
                        if evaluation.count_later:
                            writer.defer_nominations(rowid, lane, job.id)
                    markers = [*evaluation.markers, *markers]
                    writer.mark_done(job.id, decision, memory_id, now)
                    writer.bump_counters(markers)
                if decision == "created" and nominate is not None:
                    nominate.created(rowid, vectors.get(job.id))
            except JobWithdrawn:  # a forget erased it meanwhile: its savepoint wrote nothing of it
                continue
            except StoreBusy:  # another session's lock, not this job's fault: the worker retries the run
                raise
            except Exception as exc:  # one bad job must not stall its lane: retry it later
                log.exception("curation of job %s failed", job.id)
                _reschedule(writer, job, f"{type(exc).__name__}: {exc}", settings.max_attempts)
                continue
            logged.append((markers, job.id, memory_id, evaluation.reason))
    for entry in logged:  # after the commit: only what is really written is logged
        log_markers(*entry)
    return stopped if stopped is not None else (len(batch), None)


class _BatchNominations:
    """kNN candidates for every job of a run, from one matrix product over the lane as it
    was when the run began (or just before: the worker may find them off the writer), plus
    the memories the run itself creates (so proposals in one batch still nominate each
    other). Nothing else curates the lane meanwhile: the worker holds the lease, and LLM
    decisions end a run. A candidate forgotten meanwhile drops out when its row is read."""

    def __init__(
        self,
        writer: StoreWriter,
        lane: int,
        batch: Sequence[QueuedJob],
        vectors: dict[str, np.ndarray],
        settings: CurationSettings,
        nearest: dict[str, list[VectorMatch]] | None = None,
    ) -> None:
        k = settings.nominator_k
        if nearest is None:
            wanted = {job.id: vectors[job.id] for job in batch if job.id in vectors}
            nearest = nearest_each(writer.vector_search(lane), wanted, k, settings.nominator_threshold)
        self._before = nearest
        self._vectors = vectors
        self._k = k
        self._fresh: list[tuple[int, np.ndarray]] = []

    def candidates(self, job_id: str) -> list[VectorMatch] | None:
        vector = self._vectors.get(job_id)
        if vector is None:
            return None
        fresh = [VectorMatch(pk, float(other @ vector)) for pk, other in self._fresh]
        return sorted(self._before.get(job_id, []) + fresh, key=lambda c: -c[1])[: self._k]

    def created(self, rowid: int, vector: np.ndarray | None) -> None:
        if vector is not None:
            self._fresh.append((rowid, vector))


def apply_plan(
    writer: StoreWriter,
    *,
    lane: int,
    holder: str,
    settings: CurationSettings,
    job: QueuedJob,
    evaluation: Evaluation,
    plan: MergePlan,
    vector: np.ndarray | None,
    model_id: str | None,
    llm_model: str | None,
) -> None:
    """Write what the LLM decided (as planned by MergeGuard) for one job."""
    try:
        with writer.transaction():
            _renew(writer, lane, holder, settings.lease_s)
            now = time.time()
            markers = [*evaluation.markers, *plan.markers]
            # The LLM judged the bodies it was shown. If any of them was forgotten or changed
            # meanwhile (forget, undo), the plan is stale: writing it would bring forgotten text
            # back or drop the new body, so the proposal is created on its own instead.
            shown = ((plan.target,) if plan.target else ()) + plan.retire
            live = writer.memories_by_pk([n.rowid for n in shown])
            stale = not all(n.rowid in live and live[n.rowid].body == n.body for n in shown)
            if stale:
                markers = [m for m in markers if not m.startswith("curation_guard_")] + ["curation_decision_stale"]
            if plan.kind == "create" or stale:
                # `vector` is the merged body's for a merge, the proposal's otherwise.
                memory_id, created = _create(writer, job, vector if plan.kind != "merge" else None, model_id, now)
                markers += created
                decision = "created"
            elif plan.kind == "skip":
                assert plan.target is not None
                writer.add_occurrence(plan.target.rowid, now)
                memory_id, decision = plan.target.id, "skipped"
            else:
                assert plan.target is not None and plan.body is not None
                writer.replace_body(
                    pk=plan.target.rowid,
                    lane=lane,
                    body=plan.body,
                    key=norm_key(plan.body),
                    vector=vector,
                    model_id=model_id,
                    decision=plan.decision,
                    job_id=job.id,
                    llm_model=llm_model,
                    guard=plan.guard.reason if plan.guard else None,
                    merged_ids=[n.id for n in plan.retire],
                    now=now,
                )
                for nominee in plan.retire:
                    writer.retire(nominee.rowid, plan.target.id, now)
                memory_id, decision = plan.target.id, plan.decision
            writer.mark_done(job.id, decision, memory_id, now)
            writer.bump_counters(markers)
    except (LeaseLost, StoreBusy):  # StoreBusy: another session's lock; the worker retries, no attempt counted
        raise
    except JobWithdrawn:  # a forget erased it while the LLM thought: write nothing of it
        log.info("job %s was forgotten while it was curated; its outcome is dropped", job.id)
        return
    except Exception as exc:
        log.exception("applying the curation decision for job %s failed", job.id)
        record_failures(writer, [job], f"{type(exc).__name__}: {exc}", settings.max_attempts)
        return
    log_markers(markers, job.id, memory_id, f"{evaluation.reason}; {plan.reason}")


def needs_vector(reader: StoreReader, lane: int, batch: Sequence[QueuedJob], curation_enabled: bool) -> list[str]:
    """Ids of the jobs that may create a memory (so need a vector): not exact repeats, except
    that a job that supersedes memories creates one whatever its text (see evaluate)."""
    if not curation_enabled:
        return [job.id for job in batch]
    keys = {job.id: norm_key(job.text) for job in batch}
    existing = reader.live_norm_keys(lane, keys.values())
    wanted: list[str] = []
    seen: set[str] = set()
    for job in batch:
        key = keys[job.id]
        if job.supersedes or (key not in existing and key not in seen):
            wanted.append(job.id)
        seen.add(key)
    return wanted


# The worker's pause between passes while the database stays locked by another session
# (StoreBusy): the jobs' own backoff (retry_delay_s), capped lower -- each pass already waits
# lock_wait_s for the lock, and the jobs should go on soon after it is released.
BUSY_RETRY_MAX_S = 5.0


def busy_retry_s(passes_so_far: int) -> float:
    """0.5 s, 1 s, 2 s, 4 s, then 5 s between passes that met a lock."""
    return min(BUSY_RETRY_MAX_S, retry_delay_s(passes_so_far))


def retry_delay_s(attempts_so_far: int) -> float:
    """Exponential backoff: 0.5 s, 1 s, 2 s, ... capped at a minute."""
    return min(60.0, 0.5 * 2**attempts_so_far)


def record_failures(writer: StoreWriter, batch: Sequence[QueuedJob], error: str, max_attempts: int) -> None:
    """Count a failed attempt for each job: back to the queue with backoff, or failed for good."""
    with writer.transaction():
        for job in batch:
            _reschedule(writer, job, error, max_attempts)


def _reschedule(writer: StoreWriter, job: QueuedJob, error: str, max_attempts: int) -> None:
    now = time.time()
    final = job.attempts + 1 >= max_attempts
    retry_at = None if final else now + retry_delay_s(job.attempts)
    writer.mark_attempt_failed(job.id, error, retry_at, now)
    if final:
        log.error("job %s failed after %d attempts: %s", job.id, job.attempts + 1, error)
