"""A consistent copy of the database while servers keep writing to it.

SQLite's online backup API copies the pages of one read snapshot. All pages are
copied in a single step (`pages=-1`), so the copy is exactly the database as of
the moment the step began: every transaction committed before it, none after.
In WAL mode that read transaction blocks no writer. The copy is built in a
hidden file beside the target and moved into place only when it is complete and
has been checked, so PATH never holds half a backup.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...errors import StoreUnavailable
from ..files import check_destination, place, remove_with_sidecars, reserve_staging
from ..records import BackupResult
from .connection import connect
from .integrity import check_store, store_counts


def backup_database(source: Path, target: Path, *, force: bool = False, verify: bool = True) -> BackupResult:
    """Copy `source` to `target` with the online backup API; check the copy unless `verify` is False."""
    source, target = Path(source).expanduser(), Path(target).expanduser()
    if not source.is_file():
        raise StoreUnavailable(f"there is no database at {source} to back up")
    target = check_destination(target, (source,), force=force, what="backup")
    staging = reserve_staging(target, "backup")
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
        remove_with_sidecars(staging)
        raise
    finally:
        src.close()
    try:
        place(staging, target, force, "backup")
    finally:
        remove_with_sidecars(staging)
    return BackupResult(source, target, target.stat().st_size, time.monotonic() - started, counts, tuple(problems))
