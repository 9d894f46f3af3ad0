"""What the contract tests share: curating a fact the way the worker does, random unit
vectors, and reading a whole store back. Contract calls only (no backend module)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from memwal_mcp.normalize import norm_key
from memwal_mcp.records import Job
from memwal_mcp.store import StoreReader, StoreWriter
from memwal_mcp.store.records import ImportRow, JobRequest, LaneRow, MemoryRecord, RevisionRow, TombstoneRow

MODEL = "contract-test-model"
# The real model's dimension: a backend may size its vector column for it.
DIM = 384
# Realistic instants: a backend may compare them with its own clock (due jobs, leases).
T0 = float(int(time.time()))


@dataclass(frozen=True)
class Stored:
    """A curated memory and the job it came from."""

    pk: int
    id: str
    job: Job
    lane: int


def unit_vectors(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def lane_of(reader: StoreReader, owner: str, namespace: str) -> int:
    (lane,) = [lane.id for lane in reader.owner_lanes(owner) if lane.namespace == namespace]
    return lane


def prepare_vectors(writer: StoreWriter) -> None:
    assert writer.ensure_vector_table(MODEL, DIM) is None


def create_memories(
    writer: StoreWriter,
    owner: str,
    namespace: str,
    lane: int,
    job_id: str,
    bodies: Sequence[str],
    vectors: np.ndarray,
) -> list[int]:
    """Memories citing one job, each with its vector, in one transaction: a big lane filled in
    seconds (curating a job per memory would take minutes). Their keys."""
    with writer.transaction():
        return [
            writer.create_memory(
                owner=owner,
                namespace=namespace,
                lane=lane,
                body=body,
                key=norm_key(body),
                source_job_id=job_id,
                vector=vector,
                model_id=MODEL,
                now=T0,
            )[0]
            for body, vector in zip(bodies, vectors)
        ]


def remember(
    writer: StoreWriter,
    owner: str,
    namespace: str,
    body: str,
    *,
    vector: np.ndarray | None = None,
    at: float = T0,
    occurred_at: float | None = None,
    key: str | None = None,
    expires_at: float | None = None,
    supersedes: Sequence[str] = (),
) -> Stored:
    """File a remember job and curate it into a new memory as the worker does: the job on its
    own, then the memory and the job marked done in one transaction (which takes the job's
    expiry and supersedes effect)."""
    if expires_at is None and not supersedes:
        job, _ = writer.insert_job(owner, namespace, body, key, at, occurred_at)
    else:
        request = JobRequest(namespace, body, key, occurred_at, expires_at, tuple(supersedes))
        ((job, _),) = writer.insert_jobs(owner, [request], at)
    lane = lane_of(writer, owner, namespace)
    with writer.transaction():
        pk, memory_id = writer.create_memory(
            owner=owner,
            namespace=namespace,
            lane=lane,
            body=body,
            key=norm_key(body),
            source_job_id=job.id,
            vector=vector,
            model_id=MODEL if vector is not None else None,
            now=at,
            occurred_at=occurred_at,
            created_at=at,
        )
        writer.mark_done(job.id, "created", memory_id, at)
    return Stored(pk, memory_id, job, lane)


def curate_created(writer: StoreWriter, job: Job, now: float) -> str:
    """What the worker writes for a job that becomes a memory of its own, inside the caller's
    transaction: the memory's id."""
    _, memory_id = writer.create_memory(
        owner=job.owner,
        namespace=job.namespace,
        lane=lane_of(writer, job.owner, job.namespace),
        body=job.text,
        key=norm_key(job.text),
        source_job_id=job.id,
        vector=None,
        model_id=None,
        now=now,
        created_at=job.created_at,
    )
    writer.mark_done(job.id, "created", memory_id, now)
    writer.bump_counters(["curation_created"])
    return memory_id


@dataclass(frozen=True)
class Exported:
    """Every record an export of the store holds, in iter_* order."""

    lanes: list[LaneRow] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    revisions: list[RevisionRow] = field(default_factory=list)
    tombstones: list[TombstoneRow] = field(default_factory=list)

    def rows(self) -> list[ImportRow]:
        """In the order an import takes them: lanes, jobs, memories, revisions, tombstones."""
        return [row for kind in self.kinds() for row in kind]

    def of(self, owner: str) -> Exported:
        return Exported(
            [row for row in self.lanes if row.owner == owner],
            [row for row in self.jobs if row.owner == owner],
            [row for row in self.memories if row.owner == owner],
            [row for row in self.revisions if row.owner == owner],
            [row for row in self.tombstones if row.owner == owner],
        )

    def kinds(self) -> tuple[Sequence[ImportRow], ...]:
        return (self.lanes, self.jobs, self.memories, self.revisions, self.tombstones)


def everything(reader: StoreReader, owner: str | None = None) -> Exported:
    """Every exported record of the owner (None: of every owner), in one snapshot."""
    with reader.snapshot():
        return Exported(
            list(reader.iter_lanes(owner)),
            list(reader.iter_jobs(owner)),
            list(reader.iter_memories(owner)),
            list(reader.iter_revisions(owner)),
            list(reader.iter_tombstones(owner)),
        )


def owner_totals(reader: StoreReader, owner: str) -> tuple[int, int]:
    """(live memories, characters of their bodies) over all of the owner's lanes."""
    totals = reader.lane_totals([lane.id for lane in reader.owner_lanes(owner)])
    return sum(count for count, _ in totals.values()), sum(chars for _, chars in totals.values())
