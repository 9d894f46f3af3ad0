"""Forget and undo -- the two operations that change history on purpose -- decided once for
every backend; each backend supplies only the statements (`LifecycleTarget`), as importing.py
does for an import.

Forget erases content: the memory's body, its previous bodies, the text of every job that ended
in it, of memories a CONSOLIDATE folded into it, and of queued jobs repeating any of that text;
it keeps a tombstone. How the bytes go (secure delete and the write-ahead log on SQLite, VACUUM
on PostgreSQL, the full-text and vector rows) is the backend's. What the erased memories had
superseded is settled here: an erased memory that was current gives them back (live, or plain
expired when past their expiry); one that was superseded itself (the middle of a chain
A <- B <- C) hands them to its superseder, so the chain stays one current fact.

Undo restores the state a memory had before its last change, as a new revision: the body with
its expiry, what a merge folded in, what a supersede replaced. An undo that would change
nothing is refused, naming why.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..errors import InvalidInput, NotFound
from ..normalize import norm_key, normalize_text
from ..records import SUPERSEDED, UNSUPERSEDED
from .contract import StoreWriter
from .records import Forgotten, MemoryState, Undone, nothing_undone

# Revisions whose change folded a proposal (its job) into the body: undoing one splits it out.
_FOLDING = ("updated", "consolidated", "appended")


@dataclass(frozen=True, slots=True)
class FoldedJob:
    """The remember job whose proposal a merge folded into a memory, as undo splits it out."""

    namespace: str
    lane: int
    text: str
    occurred_at: float | None
    created_at: float
    expires_at: float | None


@dataclass(frozen=True, slots=True)
class JobState:
    seq: int
    lane: int
    text: str
    decision: str | None
    memory_id: str | None
    # What a queued job (a correction) supersedes, hidden from recall while it waits; empty for a
    # job no longer queued (one that failed for good hides nothing).
    pending_supersedes: tuple[str, ...] = ()


class LifecycleTarget(Protocol):
    """The statements forget and undo need, over the writer's open transaction: lookups and
    updates by id, and no decisions (those are this module's)."""

    # --- what a forget reaches
    def folded_rows(self, owner: str, ids: Sequence[str]) -> list[tuple[int, str]]:
        """(pk, id) of the owner's memories with one of these ids or retired into one, pk order.
        The owner filter is the wall: another owner's row naming the id is never erased with it."""

    def erased_texts(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, str]]:
        """(lane, text) of every text being erased: the bodies, their revisions, their jobs."""

    def queued_texts(self, lanes: Sequence[int]) -> list[tuple[int, int, str]]:
        """(seq, lane, text) of the queued jobs of these lanes."""

    def job_state(self, owner: str, job_id: str) -> JobState | None: ...

    def merge_spans(self, owner: str, ids: Sequence[str], pks: Sequence[int]) -> list[tuple[int, int, int]]:
        """(memory pk, first revision id, last revision id) of the revisions other memories (not
        among `pks`) got from these memories' jobs."""

    def drop_revisions(self, memory_pk: int, first: int, last: int) -> None: ...

    # --- erasing
    def erase_jobs_of(self, owner: str, ids: Sequence[str], now: float) -> int:
        """The jobs that ended in these memories lose their text and idempotency key."""

    def erase_queued(self, seqs: Sequence[int], memory_id: str | None, now: float) -> int:
        """Queued jobs erased and withdrawn (done), pointing at `memory_id` if given."""

    def erase_job(self, owner: str, job_id: str, now: float) -> int: ...

    def erase_memories(self, lane: int, pks: Sequence[int], now: float) -> None:
        """Bodies, revisions and index entries gone, rows emptied to status 'forgotten'."""

    def add_tombstones(self, owner: str, namespace: str, rows: Sequence[tuple[str, int]], now: float) -> None:
        """(memory id, jobs erased) per forgotten memory."""

    # --- supersede links
    def superseders(self, owner: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, superseded_by) of those of these memories that were superseded, pk order."""

    def superseded_by_any(self, owner: str, by_ids: Sequence[str], live_at: float | None) -> list[tuple[str, str]]:
        """(id, superseded_by) of the owner's superseded memories replaced by one of `by_ids`,
        pk order; with `live_at`, only those not expired by then."""

    def repoint(self, owner: str, from_id: str, to_id: str, now: float) -> None:
        """What `from_id` superseded is superseded by `to_id`."""

    def supersede_notes(self, owner: str, memory_id: str) -> list[tuple[int, tuple[str, ...]]]:
        """(revision id, merged_ids) of the memory's supersede and unsupersede revisions."""

    def rename_note(self, revision_id: int, merged_ids: Sequence[str]) -> None: ...

    def supersede(self, owner: str, ids: Sequence[str], by_id: str, job_id: str | None, now: float) -> list[str]:
        """Supersede the live ones by `by_id`, with a revision naming them: those superseded."""

    def unsupersede(self, owner: str, memory_id: str, by_id: str) -> bool: ...

    def unretire(self, owner: str, memory_id: str, from_id: str) -> bool: ...

    def note(
        self, owner: str, memory_id: str, decision: str, job_id: str | None, merged_ids: Sequence[str], now: float
    ) -> None:
        """A revision for a change that leaves the body as it is."""

    # --- undo
    def set_expiry(self, pk: int, expires_at: float | None) -> None: ...

    def folded_job(self, owner: str, memory_id: str, job_id: str) -> FoldedJob | None:
        """The job, if done into `memory_id` and its text still there."""

    def point_job(self, job_id: str, memory_id: str, now: float) -> None:
        """The job ended in `memory_id`, as a CREATE."""


# --- forget ----------------------------------------------------------------------


def forget(
    writer: StoreWriter, target: LifecycleTarget, owner: str, memory_id: str, retired_too: bool = False
) -> Forgotten:
    """Erase the memory (or the fact a job id names) and what it holds, in one transaction.

    A memory merged into another is refused unless `retired_too` (an import replaying the
    tombstones of the database it came from). A job id (`j_...`, what recall shows for a fact
    still queued) names the fact too: a queued job is erased with the queued repeats of its
    text; a job already curated forgets the memory it became."""
    with writer.transaction():
        if not memory_id.startswith("j_"):
            return _erase(writer, target, owner, memory_id, retired_too)
        job = target.job_state(owner, memory_id)
        if job is None:
            raise NotFound(f"no memory or job with id {memory_id!r}")
        if job.decision == "forgotten":
            return Forgotten((), 0, already=True, via_job=memory_id)
        if job.memory_id is None:
            return _erase_queued(writer, target, owner, memory_id, job)
        return replace(_erase(writer, target, owner, job.memory_id, retired_too), via_job=memory_id)


def _erase(writer: StoreWriter, target: LifecycleTarget, owner: str, memory_id: str, retired_too: bool) -> Forgotten:
    found = writer.memory_by_id(owner, memory_id)
    if found is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    row, status, into = found
    # A superseded memory's text is in no other body: it can be forgotten on its own.
    if status == "retired" and not retired_too:
        # Its text lives on in the body it was merged into: erasing only this row would report
        # the fact forgotten while recall still finds it.
        raise InvalidInput(
            f"memory {memory_id!r} was merged into {into!r}, whose body holds its text: forget {into!r}, "
            f"or undo that merge (memwal-mcp undo {into}) and then forget {memory_id!r}"
        )
    if status == "forgotten":
        return Forgotten((), 0, already=True)
    targets = _folded_into(target, owner, memory_id)
    ids = [mid for _, mid in targets]
    pks = [pk for pk, _ in targets]
    now = time.time()
    repeats = _queued_repeats(target, owner, ids, pks)
    for memory_pk, first, last in target.merge_spans(owner, ids, pks):
        # A merge an undo split back out: those revisions' bodies hold the fact being forgotten.
        target.drop_revisions(memory_pk, first, last)
    # The erased jobs give up their idempotency keys: the same key later files a new fact
    # instead of replaying a job whose text is gone.
    jobs = target.erase_jobs_of(owner, ids, now)
    if repeats:
        jobs += target.erase_queued(repeats, memory_id, now)
    # Memories folded together belong to one owner and lane.
    target.erase_memories(row.lane, pks, now)
    target.add_tombstones(owner, row.namespace, [(mid, jobs if mid == memory_id else 0) for mid in ids], now)
    restored, expired = _settle_superseded(target, owner, ids, now)
    # The one asked for first.
    erased = (memory_id, *(mid for mid in ids if mid != memory_id))
    return Forgotten(erased, jobs, restored=restored, expired_back=expired)


def _folded_into(target: LifecycleTarget, owner: str, memory_id: str) -> list[tuple[int, str]]:
    """(pk, id) of the memory and, recursively, of every memory of the same owner retired into it."""
    found: list[tuple[int, str]] = []
    frontier = [memory_id]
    while frontier:
        known = {mid for _, mid in found}
        fresh = [(pk, mid) for pk, mid in target.folded_rows(owner, frontier) if mid not in known]
        found.extend(fresh)
        frontier = [mid for _, mid in fresh if mid not in frontier]
    return found


def _queued_repeats(target: LifecycleTarget, owner: str, ids: list[str], pks: list[int]) -> list[int]:
    """Seqs of queued jobs whose normalized text equals any text being erased, in that text's lane.

    Without this, a repeat filed just before the forget (or one a worker has read but not
    applied yet) would be curated after it, into a new memory: the fact forgotten, back."""
    erased = {(lane, normalize_text(text)) for lane, text in target.erased_texts(owner, ids, pks)}
    lanes = sorted({lane for lane, _ in erased})
    return [seq for seq, lane, text in target.queued_texts(lanes) if (lane, normalize_text(text)) in erased]


def _erase_queued(writer: StoreWriter, target: LifecycleTarget, owner: str, job_id: str, job: JobState) -> Forgotten:
    """A job not curated (or failed): erased with the queued repeats of its text in its lane
    (curated later, they would bring the fact back). The worker's mark_done only finishes a job
    still queued: one it is curating now is withdrawn.

    A queued correction already hid what it supersedes (shown.py): erased, it gives them back,
    and says so as a forget of a curated correction does -- those still live and not expired."""
    wanted = normalize_text(job.text)
    seqs = [
        seq for seq, _, text in target.queued_texts([job.lane]) if seq != job.seq and normalize_text(text) == wanted
    ]
    now = time.time()
    jobs = target.erase_job(owner, job_id, now)
    if seqs:
        jobs += target.erase_queued(seqs, None, now)
    back = []
    for other in job.pending_supersedes:
        found = writer.memory_by_id(owner, other)
        if found is not None and found[1] == "live" and not found[0].expired(now):
            back.append(other)
    return Forgotten((), jobs, via_job=job_id, restored=tuple(back))


def _settle_superseded(
    target: LifecycleTarget, owner: str, ids: Sequence[str], now: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the erased memories superseded. An erased memory that was current gives it back, as
    undoing the supersede would: superseded by a memory that is gone, it would be in no recall,
    and the undo its history offers refused. One past its expiry comes back as what it would be
    had the erased memory never been: expired, out of recall (purge --expired erases it), never
    marked superseded by a memory that no longer exists. A forgotten one stays forgotten.

    An erased memory that was superseded itself (the middle of a chain A <- B <- C) hands what
    it replaced to what replaced it: A is superseded by C, and C's supersede revisions name A,
    so history and undo follow the chain. Returns (those live again, those back but expired)."""
    erased = set(ids)
    successors = {mid: by for mid, by in target.superseders(owner, ids) if by not in erased}
    for mid, by in successors.items():
        _repoint(target, owner, mid, by, now)
    current = [mid for mid in ids if mid not in successors]
    if not current:
        return (), ()
    unexpired = {old for old, _ in target.superseded_by_any(owner, current, now)}
    live: list[str] = []
    expired: list[str] = []
    for old, by in target.superseded_by_any(owner, current, None):
        if target.unsupersede(owner, old, by):
            (live if old in unexpired else expired).append(old)
    return tuple(live), tuple(expired)


def _repoint(target: LifecycleTarget, owner: str, erased_id: str, by_id: str, now: float) -> None:
    moved = [mid for mid, _ in target.superseded_by_any(owner, [erased_id], None)]
    if not moved:
        return
    target.repoint(owner, erased_id, by_id, now)
    for revision_id, names in target.supersede_notes(owner, by_id):
        if erased_id in names:
            renamed = [new for name in names for new in (moved if name == erased_id else [name])]
            target.rename_note(revision_id, list(dict.fromkeys(renamed)))


# --- undo ------------------------------------------------------------------------


def undo_last_change(writer: StoreWriter, target: LifecycleTarget, owner: str, memory_id: str) -> Undone:
    """Restore the state before the last change as a new revision, and keep everything remembered.

    Undoing a merge (UPDATE, CONSOLIDATE, append) brings back the body with the expiry it had,
    and what it folded in: the memories a CONSOLIDATE retired, and the proposal itself, as its
    own live memory -- the restored body does not hold it, and a job that says "done" must end
    in a memory that does. The undo's revision lists them, so undoing the undo ("redone") folds
    them in again, and undoing that brings them back once more. Undoing a supersede brings back
    what it replaced (body unchanged, a revision `unsuperseded`); undoing that supersedes them
    again. An undo that would change nothing raises InvalidInput naming why, and writes nothing;
    so does a redo of a merge once a memory it would fold in again is no longer live (another
    fact superseded it, a forget, a merge): the merged body holds that memory's text, and would
    bring back as current a fact the user corrected since.

    Returns what it did (Undone). Memories brought back get their vectors from the curation
    worker's backlog pass; recall scores them directly until then."""
    with writer.transaction():
        found = writer.memory_by_id(owner, memory_id)
        if found is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        row, status, _ = found
        if status != "live":
            raise InvalidInput(f"memory {memory_id!r} is {status}; only a live memory can be undone")
        history = writer.revisions(row.pk)
        if not history:
            raise InvalidInput(f"memory {memory_id!r} has no change to undo")
        undoable = history[0]  # the newest previous state comes back
        now = time.time()
        listed = list(undoable.merged_ids)
        if undoable.decision == SUPERSEDED:  # the body stayed; what it replaced comes back
            restored = [i for i in listed if target.unsupersede(owner, i, memory_id)]
            if not restored:
                raise nothing_undone(memory_id, "superseded", [(i, _state(writer, owner, i)) for i in listed])
            target.note(owner, memory_id, UNSUPERSEDED, undoable.job_id, restored, now)
            return Undone(undoable.body, restored=tuple(restored))
        if undoable.decision == UNSUPERSEDED:  # redo: replaced again
            again = target.supersede(owner, listed, memory_id, undoable.job_id, now)
            if not again:
                raise nothing_undone(memory_id, "brought back", [(i, _state(writer, owner, i)) for i in listed])
            return Undone(undoable.body, superseded_again=tuple(again))
        if undoable.decision == "undone":
            # Redo: what the undo brought back is folded in again, as a CONSOLIDATE folds. All of
            # it or nothing: the body it goes back to holds each one's text.
            states = [(other, _state(writer, owner, other)) for other in listed]
            moved = [(other, state) for other, state in states if state is None or state[0] != "live"]
            if moved:
                raise nothing_undone(memory_id, "brought back", moved)
            for other in listed:
                got = writer.memory_by_id(owner, other)
                assert got is not None  # live, just read in this transaction
                writer.retire(got[0].pk, memory_id, now)
            restored, decision = list(listed), "redone"
        else:
            restored = [i for i in listed if target.unretire(owner, i, memory_id)]
            if undoable.decision in _FOLDING and undoable.job_id:
                split = _split_proposal(writer, target, owner, memory_id, undoable.job_id, now)
                if split is not None:
                    restored.append(split)
            decision = "undone"
        writer.replace_body(
            pk=row.pk,
            lane=row.lane,
            body=undoable.body,
            key=norm_key(undoable.body),
            vector=None,
            model_id=None,
            decision=decision,
            job_id=undoable.job_id,
            llm_model=None,
            guard=None,
            merged_ids=restored,
            now=now,
        )
        # The expiry it had with that body comes back with it: a merge that renewed an expired
        # fact, undone, leaves it expired.
        target.set_expiry(row.pk, undoable.expires_at)
    if decision == "redone":
        return Undone(undoable.body, folded_again=tuple(restored))
    return Undone(undoable.body, restored=tuple(restored))


def _state(writer: StoreWriter, owner: str, memory_id: str) -> MemoryState | None:
    found = writer.memory_by_id(owner, memory_id)
    return None if found is None else (found[1], found[2], found[0].superseded_by)


def _split_proposal(
    writer: StoreWriter, target: LifecycleTarget, owner: str, memory_id: str, job_id: str, now: float
) -> str | None:
    """The proposal a merge folded into `memory_id`, as its own live memory (its vector queued),
    and its job pointing at it: the id, or None if the job no longer ends there."""
    job = target.folded_job(owner, memory_id, job_id)
    if job is None:
        return None
    pk, split = writer.create_memory(
        owner=owner,
        namespace=job.namespace,
        lane=job.lane,
        body=job.text,
        key=norm_key(job.text),
        source_job_id=job_id,
        vector=None,
        model_id=None,
        now=now,
        occurred_at=job.occurred_at,
        created_at=job.created_at,
    )
    target.point_job(job_id, split, now)
    target.set_expiry(pk, job.expires_at)
    return split
