"""A consistent copy of the database while servers keep writing to it.

SQLite's online backup API copies the pages of one read snapshot. All pages are
copied in a single step (`pages=-1`), so the copy is exactly the database as of
the moment the step began: every transaction committed before it, none after.
In WAL mode that read transaction blocks no writer. The copy is built in a
hidden file beside the target and moved into place only when it is complete and
has been checked, so PATH never holds half a backup.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput, StoreUnavailable
from .connection import connect
from .integrity import Problem, StoreCounts, check_store, store_counts


@dataclass(frozen=True, slots=True)
class BackupResult:
    source: Path
    path: Path
    bytes: int
    seconds: float
    counts: StoreCounts
    problems: tuple[Problem, ...]  # what `check` finds in the copy (empty when verify=False or clean)


def _remove_with_sidecars(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _exists(target: Path) -> InvalidInput:
    return InvalidInput(f"{target} already exists; choose another path or pass --force to overwrite it")


def _place(staging: Path, target: Path, force: bool) -> None:
    """Move the finished copy to `target`; without `force`, never over an existing file."""
    if force:
        os.replace(staging, target)
        return
    try:
        os.link(staging, target)  # atomic and fails if the name was taken meanwhile
    except FileExistsError:
        raise _exists(target) from None
    except OSError:  # a filesystem without hard links
        if target.exists():
            raise _exists(target) from None
        os.replace(staging, target)
        return
    staging.unlink()


def backup_database(source: Path, target: Path, *, force: bool = False, verify: bool = True) -> BackupResult:
    """Copy `source` to `target` with the online backup API; check the copy unless `verify` is False."""
    source, target = Path(source).expanduser(), Path(target).expanduser()
    if not source.is_file():
        raise StoreUnavailable(f"there is no database at {source} to back up")
    if target.exists() and target.resolve() == source.resolve():
        raise InvalidInput(f"{target} is the database itself; choose another path for the backup")
    if target.is_dir():
        raise InvalidInput(f"{target} is a folder; give a file name for the backup")
    if target.exists() and not force:
        raise _exists(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create the folder {target.parent} for the backup: {exc}") from exc

    staging = target.with_name(f".{target.name}.{os.getpid()}.partial")
    _remove_with_sidecars(staging)
    started = time.monotonic()
    src = connect(source)
    try:
        dst = connect(staging)
        try:
            # connect() made the new file WAL; a WAL destination must already have the
            # source's page size, a rollback-journal one takes it from the source.
            dst.execute("PRAGMA journal_mode = DELETE")
            src.backup(dst, pages=-1)  # one step = one snapshot
            problems, counts = check_store(dst) if verify else ([], store_counts(dst))
            # Fold the copy's WAL into the file, so the backup is one self-contained file.
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            dst.close()
    except BaseException:
        _remove_with_sidecars(staging)
        raise
    finally:
        src.close()
    try:
        _place(staging, target, force)
    finally:
        _remove_with_sidecars(staging)
    return BackupResult(source, target, target.stat().st_size, time.monotonic() - started, counts, tuple(problems))

