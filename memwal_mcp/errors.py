"""Domain errors. The MCP layer turns them into tool errors, the CLI into exit codes.

MemwalError
├── InvalidInput            an argument is wrong; the message names it
│   ├── IdempotencyKeyReused
│   └── ImportFormatError    an import file is malformed (names the file and line)
├── NotFound                no such job or memory for this owner
├── StoreUnavailable        SQLite cannot be opened with sqlite-vec
│   └── StoreBusy           another session held a lock past the wait bound: try again
│       └── StoreUnreachable PostgreSQL did not answer (down, restarting, unreachable): try again
├── UnsafeConfiguration     refusing to start as configured (e.g. open HTTP without tokens)
└── EmbeddingError          the model cannot load, or does not fit the database
"""


class MemwalError(Exception):
    """Base class of every error memwal-mcp raises on purpose."""


class InvalidInput(MemwalError):
    """A caller-supplied value is out of range or malformed."""


class IdempotencyKeyReused(InvalidInput):
    """An idempotency key came back with a different request."""


class ImportFormatError(InvalidInput):
    """An input file is malformed; the message names the file and line."""


class NotFound(MemwalError):
    """The id does not exist for this owner (other owners' ids look the same)."""


class StoreUnavailable(MemwalError):
    """The database cannot be opened with the extensions memwal-mcp needs."""


class StoreBusy(StoreUnavailable):
    """Another session or process held a lock longer than the store waits ([storage] lock_wait_s
    on PostgreSQL, the busy deadline on SQLite). Nothing was written; the same work succeeds once
    the lock is released, so it is no failure of what was being written (the curation worker
    retries it without counting an attempt)."""


class StoreUnreachable(StoreBusy):
    """The database server did not answer: PostgreSQL down, restarting or cut off. A StoreBusy
    because what follows is the same: the unit of work that failed is rolled back with its
    connection, the same work succeeds once the server answers, and the curation worker waits
    for that without counting an attempt against any job."""


class UnsafeConfiguration(MemwalError):
    """The server would start in a way that exposes memories; it refuses."""


class EmbeddingError(MemwalError):
    """The embedding model cannot be loaded or does not match the stored vectors."""
