"""Bearer tokens (hashes only) for the HTTP transports."""

from __future__ import annotations

import sqlite3
import time

from ..records import TokenRow
from .database import transaction


def _row(row: tuple) -> TokenRow:
    return TokenRow(row[0], row[1], tuple(s for s in row[2].split(",") if s), row[3], row[4], row[5])


def insert_token(conn: sqlite3.Connection, digest: str, owner: str, scopes: tuple[str, ...], label: str | None) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO api_tokens (hash, owner, scopes, label, created_at) VALUES (?, ?, ?, ?, ?)",
            (digest, owner, ",".join(scopes), label, time.time()),
        )


def token_by_hash(conn: sqlite3.Connection, digest: str) -> TokenRow | None:
    row = conn.execute(
        "SELECT hash, owner, scopes, label, created_at, revoked_at FROM api_tokens WHERE hash = ?", (digest,)
    ).fetchone()
    return _row(row) if row else None


def list_tokens(conn: sqlite3.Connection) -> list[TokenRow]:
    rows = conn.execute(
        "SELECT hash, owner, scopes, label, created_at, revoked_at FROM api_tokens ORDER BY created_at"
    ).fetchall()
    return [_row(row) for row in rows]


def count_active(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL").fetchone()[0]


def revoke_token(conn: sqlite3.Connection, hash_prefix: str) -> list[str]:
    """Revoke the one active token whose hash starts with the prefix; returns the hashes that
    matched. More than one match revokes nothing (the caller says it was ambiguous)."""
    with transaction(conn):
        rows = conn.execute(
            "SELECT hash FROM api_tokens WHERE revoked_at IS NULL AND hash LIKE ? ESCAPE '\\' LIMIT 1000",
            (hash_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
        ).fetchall()
        hashes = [r[0] for r in rows]
        if len(hashes) == 1:
            conn.execute("UPDATE api_tokens SET revoked_at = ? WHERE hash = ?", (time.time(), hashes[0]))
    return hashes
