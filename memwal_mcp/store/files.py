"""Output files beside a store: never over the store's own files, never over a device, never half-written.

An export or a backup is built in a hidden file beside its target and moved into place only
when complete. A store's own files (a SQLite database and the sidecars SQLite keeps next to
it) are recognized by real path and inode, so no symlink or hard link gets one overwritten.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ..errors import InvalidInput

# Files SQLite keeps beside a database; writing over any of them damages the database.
SIDECARS = ("-wal", "-shm", "-journal")


def remove_with_sidecars(path: Path) -> None:
    for suffix in ("", *SIDECARS):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _database_files(database: Path) -> list[Path]:
    """The database and its sidecars, under the name given and under its real path
    (SQLite names the sidecars after the file a symlink points to)."""
    names = [database.expanduser(), Path(os.path.realpath(database.expanduser()))]
    return [name.with_name(name.name + suffix) for name in names for suffix in ("", *SIDECARS)]


def is_database_file(path: Path, database: Path) -> bool:
    """Is `path` the database or one of its sidecars: by real path (symlinks followed) or the same inode (hard links)?"""
    real = os.path.realpath(path.expanduser())
    for name in _database_files(database):
        if os.path.realpath(name) == real:
            return True
        try:
            if os.path.samefile(path.expanduser(), name):
                return True
        except OSError:  # one of them does not exist
            continue
    return False


def _exists(target: Path) -> InvalidInput:
    return InvalidInput(f"{target} already exists; choose another path or pass --force to overwrite it")


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    for test, word in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return word
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse_special(target: Path, what: str) -> bool:
    """Raise if `target` exists and is not a regular file; True if it exists (or is a dangling link)."""
    try:
        mode = os.stat(target).st_mode  # follows a symlink: what a rename would destroy is its target
    except FileNotFoundError:
        return target.is_symlink()
    except OSError as exc:
        raise InvalidInput(f"cannot write the {what} to {target}: {exc.strerror or exc}") from exc
    kind = _kind_of(mode)
    if kind == "a folder":
        raise InvalidInput(f"{target} is a folder; give a file name for the {what}")
    if kind is not None:
        raise InvalidInput(f"{target} is {kind}, not a regular file; the {what} only replaces regular files")
    return True


def check_destination(target: Path, own: Sequence[Path], *, force: bool, what: str) -> Path:
    """Refuse a destination that would damage the database, someone's file or a device.

    `what` names the output in messages ("backup", "export"). The output replaces a regular
    file only (with `force`): renaming it over a device, FIFO or socket would destroy that
    node (as root, /dev/full), so anything else is refused whatever the flags. Its folder
    must exist already: a mistyped path is an error, not a new tree of folders. Returns the
    expanded path.
    """
    target = target.expanduser()
    for database in own:
        if is_database_file(target, database):
            raise InvalidInput(
                f"{target} is the database {database} or one of its -wal/-shm files; choose another path for the {what}"
            )
    if _refuse_special(target, what) and not force:
        raise _exists(target)
    parent = target.parent
    if not parent.is_dir():
        state = "is not a folder" if parent.exists() else "does not exist"
        raise InvalidInput(f"the folder {parent} for the {what} {state}; create it first or choose another path")
    return target


def reserve_staging(target: Path, what: str) -> Path:
    """Create the empty hidden file beside `target` that the output is written to before `place`."""
    staging = target.with_name(f".{target.name}.{os.getpid()}.partial")
    remove_with_sidecars(staging)
    try:
        staging.open("x").close()
    except OSError as exc:
        raise InvalidInput(f"cannot write the {what} to {target}: {exc.strerror or exc}") from exc
    return staging


def place(staging: Path, target: Path, force: bool, what: str) -> None:
    """Move the finished file to `target`; without `force`, never over an existing file,
    and never over anything but a regular file (it may have appeared while the output was written)."""
    try:
        if force:
            _refuse_special(target, what)
            os.replace(staging, target)
            return
        try:
            os.link(staging, target)  # atomic and fails if the name was taken meanwhile
        except FileExistsError:
            raise _exists(target) from None
        except OSError:  # a filesystem without hard links
            if target.exists() or target.is_symlink():
                raise _exists(target) from None
            os.replace(staging, target)
            return
        staging.unlink()
    except InvalidInput:
        raise
    except OSError as exc:
        raise InvalidInput(f"cannot move the finished file into place at {target}: {exc.strerror or exc}") from exc
