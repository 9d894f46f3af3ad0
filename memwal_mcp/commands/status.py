from __future__ import annotations

import argparse

from ..schemas import JobOut, job_line
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "status"
HELP = "show what curation did with remember jobs"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job_ids", nargs="+")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    reports = await service.report(service.settings.owner, args.job_ids)
    jobs = [JobOut.of(r.job, r.extracted, r.memory, r.curated_here) for r in reports]
    emit(args, [job.model_dump() for job in jobs], "\n".join(job_line(job) for job in jobs))
