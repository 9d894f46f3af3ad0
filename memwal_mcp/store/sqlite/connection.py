"""Open SQLite with sqlite-vec loaded, falling back to a PyPI SQLite when needed.

Many interpreters (pyenv builds, python.org macOS builds) ship an `sqlite3` that
cannot load extensions. `sqlean-py` and `pysqlite3-binary` can; the first one that
loads sqlite-vec wins, so users never have to know.
"""

from __future__ import annotations

import importlib
import logging
import random
import sqlite3
import time
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ...errors import StoreUnavailable

log = logging.getLogger(__name__)

# Module names tried in order: the interpreter's own, then the PyPI builds.
SQLITE_CANDIDATES: tuple[str, ...] = ("sqlite3", "sqlean", "pysqlite3.dbapi2")
BUSY_TIMEOUT_MS = 5000
# SQLite primary result codes for "another connection holds the lock".
BUSY_CODES = frozenset({5, 6})


def is_busy(exc: BaseException) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in BUSY_CODES


def _load_vec(conn: sqlite3.Connection) -> None:
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


def _works(module: ModuleType) -> bool:
    try:
        conn = module.connect(":memory:")
    except Exception:
        return False
    try:
        if not hasattr(conn, "enable_load_extension"):
            return False
        _load_vec(conn)
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        conn.execute("SELECT vec_version()").fetchone()
        return True
    except Exception:
        return False
    finally:
        conn.close()


def choose_sqlite(candidates: tuple[str, ...] = SQLITE_CANDIDATES) -> ModuleType:
    """The first sqlite3-compatible module that loads sqlite-vec and has FTS5."""
    tried: list[str] = []
    for name in candidates:
        try:
            module = importlib.import_module(name)
        except ImportError:
            tried.append(f"{name} (not installed)")
            continue
        if _works(module):
            return module
        tried.append(f"{name} (cannot load sqlite-vec)")
    raise StoreUnavailable(
        "no SQLite that can load the sqlite-vec extension was found "
        f"(tried: {', '.join(tried)}); run `pip install sqlean-py` in memwal-mcp's environment"
    )


@lru_cache(maxsize=1)
def sqlite_module() -> ModuleType:
    module = choose_sqlite()
    if module.__name__ != "sqlite3":
        log.debug("the interpreter's sqlite3 cannot load extensions; using %s", module.__name__)
    return module


def _set_wal(conn: sqlite3.Connection) -> None:
    """Switching a file to WAL can fail with "database is locked" at once, without the busy
    handler, while another process opens or migrates the same new file: retry, bounded."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except Exception as exc:
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A tuned connection: WAL, busy timeout, autocommit (transactions are explicit).

    `read_only` opens the file with SQLite's mode=ro: no statement can change it, and the
    journal mode is left as the file has it (switching it would write)."""
    module = sqlite_module()
    target = f"{Path(path).absolute().as_uri()}?mode=ro" if read_only else str(path)
    conn = module.connect(
        target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False, uri=read_only
    )
    _load_vec(conn)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if read_only:
        conn.execute("PRAGMA query_only = ON")
        return conn
    _set_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA temp_store = MEMORY")
    # Forgotten text must not survive in free pages of the file.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def kept_copies(path: Path) -> str:
    """Where erased text survives while a reader on an older snapshot keeps `truncate_wal` from
    finishing, said as tests/e2e/test_forget_erasure.py finds it in the files' bytes.

    Not only in the -wal: a checkpoint that ran before that reader began (the last connection
    closing, an automatic one, an earlier forget's) already wrote the text into the database file
    itself, and the forget's clean pages cannot be copied over those while the reader still reads
    them; frames written after the last checkpoint are in the -wal. The -shm holds no row data."""
    return (
        f"{_kept_where(path)}; once that transaction ends, the next complete checkpoint writes the erased "
        "pages over them and empties the log"
    )


def kept_copies_rerun(path: Path, command: str) -> str:
    """kept_copies for a process that leaves before the reader ends: running `command` again
    (a forget's own checkpoint) is what clears them then."""
    return f"{_kept_where(path)}; when it ends, run `{command}` again to checkpoint them away"


def _kept_where(path: Path) -> str:
    return (
        f"copies of it may remain in the database file {path.name} and in its write-ahead log "
        f"{path.name}-wal while another connection (a reader holding an older snapshot) keeps its "
        "transaction open"
    )


def truncate_wal(conn: sqlite3.Connection, wait_ms: int = BUSY_TIMEOUT_MS) -> bool:
    """Copy the write-ahead log into the file and cut it to zero bytes; False if other
    connections kept it from finishing within about `wait_ms`.

    Why: erasing rows (forget) writes clean pages, but the WAL still holds the frames of
    every earlier transaction -- the remember, the curation -- with the text in plain bytes,
    until a checkpoint resets it. Only a complete TRUNCATE checkpoint removes them. It waits
    (through the busy handler) for the write lock and for readers on an older snapshot, so a
    connection in the middle of a read delays it; an idle connection in another process does
    not. Must run outside a transaction, with no statement of `conn` still active.
    """
    deadline = time.monotonic() + wait_ms / 1000
    try:
        while True:
            conn.execute(f"PRAGMA busy_timeout = {max(0, int((deadline - time.monotonic()) * 1000))}")
            try:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except Exception as exc:
                if not is_busy(exc):
                    raise
                busy = 1
            if not busy:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(0.05, left))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
