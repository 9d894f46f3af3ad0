from __future__ import annotations

import argparse
import sys
import time

from ..errors import InvalidInput
from ..recall.format import status_marks
from ..schemas import ForgetOut, erasure_kept
from ..service import MemoryService
from .output import add_json_flag, emit

NAME = "forget"
HELP = "erase a memory (or, with --query, the memories a recall finds)"
WORKER = False
# Exit status when the memories are erased from the database but its write-ahead log still holds
# a copy (a reader kept it from being emptied): distinct from errors (1, 2), so a script can tell.
WAL_KEPT_EXIT = 3
# How long, after the forgets, this short-lived process waits once more for a reader to let go:
# unlike a server, it is not there afterwards to retry.
WAL_FINAL_WAIT_MS = 2000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("memory_id", nargs="?", help="the memory to erase")
    parser.add_argument("--query", help="erase what a recall for this query returns")
    parser.add_argument("--limit", type=int, default=5, help="with --query: how many hits (default 5)")
    parser.add_argument("--namespace", default="default", help="with --query: where to search")
    parser.add_argument("--dry-run", action="store_true", help="with --query: only list what would be erased")
    parser.add_argument("--yes", action="store_true", help="with --query: erase without --dry-run")
    add_json_flag(parser)


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    owner = service.settings.owner
    if args.memory_id is None and args.query is None:
        raise InvalidInput("say what to forget: a memory id, or --query with the words to find it by")
    if args.memory_id is not None and args.query is not None:
        raise InvalidInput("give a memory id or --query, not both")
    if args.memory_id is not None:
        out = ForgetOut.of(await service.forget(owner, args.memory_id))
        outs = await _settle(service, [out])
        emit(args, outs[0].model_dump(), outs[0].summary())
        _warn_if_kept(service, outs)
        return
    # Only what the query names, and every copy of it: see MemoryService.forget_matches.
    targets = await service.forget_matches(owner, args.query, args.limit, args.namespace)
    if args.dry_run or not args.yes:
        header = "would forget:" if targets else "nothing matches."
        now = time.time()
        lines = [  # exactly what --yes erases, in that order
            f"{t.copy.id} [score={t.hit.score:.3f}]{' [pending]' if t.copy.id.startswith('j_') else ''}"
            f"{status_marks(t.copy.expires_at, t.copy.superseded_by, now)} {t.copy.text}"
            for t in targets
        ]
        emit(
            args,
            {
                "would_forget": [
                    {
                        "id": t.copy.id,
                        "text": t.copy.text,
                        "score": round(t.hit.score, 4),
                        "expired": t.copy.expired(now),
                        "superseded_by": t.copy.superseded_by,
                    }
                    for t in targets
                ]
            },
            "\n".join([header, *lines]) + ("" if args.dry_run or not targets else "\n(add --yes to erase)"),
        )
        return
    outs = await _settle(service, [ForgetOut.of(await service.forget(owner, t.copy.id)) for t in targets])
    # A copy erased along with an earlier one (a queued repeat of its text) reports "already".
    said = [o for o in outs if not o.already_forgotten]
    emit(args, [o.model_dump() for o in outs], "\n".join(o.summary() for o in said) or "nothing matches.")
    _warn_if_kept(service, outs)


async def _settle(service: MemoryService, outs: list[ForgetOut]) -> list[ForgetOut]:
    """Give a reader that kept the log from being emptied one last bounded chance, so the report
    matches the files as this process leaves them."""
    if all(o.wal_cleared for o in outs):
        return outs
    cleared = await service.store.settle_erasure(WAL_FINAL_WAIT_MS)
    # What stays on the disk is said again as the files now are (kept, or VACUUMed after all).
    return [
        o
        if o.wal_cleared
        else o.model_copy(
            update={"wal_cleared": cleared, "disk_copies": service.store.erasure_left(cleared, o.already_forgotten)}
        )
        for o in outs
    ]


def _warn_if_kept(service: MemoryService, outs: list[ForgetOut]) -> None:
    kept = list(dict.fromkeys(o.memory_id for o in outs if not o.wal_cleared))
    if kept:
        # Every id whose copies are kept, in one command line: forgetting only the first would
        # leave the others' copies once the reader has ended.
        rerun = service.store.erasure_rerun("; ".join(f"memwal-mcp forget {memory_id}" for memory_id in kept))
        print(f"memwal-mcp: warning: {erasure_kept(rerun)}", file=sys.stderr)
        raise SystemExit(WAL_KEPT_EXIT)
