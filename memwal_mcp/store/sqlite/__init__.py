"""SQLite storage: connection (sqlite-vec, fallback SQLite), migrations, jobs, memories.

Store functions are synchronous and take a `sqlite3.Connection`; `Database.run`
executes one of them on the connection's thread, so a whole transaction is one
hop off the event loop.
"""

from .database import Database

__all__ = ["Database"]
