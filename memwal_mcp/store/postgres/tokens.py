"""Bearer tokens (hashes only) for the HTTP transports."""

from __future__ import annotations

import time
from collections.abc import Sequence

from psycopg import Connection

from ..records import TokenRow

_COLUMNS = "hash, owner, scopes, label, created_at, revoked_at"


def _row(row: Sequence) -> TokenRow:
    return TokenRow(row[0], row[1], tuple(s for s in row[2].split(",") if s), row[3], row[4], row[5])


def insert_token(conn: Connection, digest: str, owner: str, scopes: tuple[str, ...], label: str | None) -> None:
    with conn.transaction():
        conn.execute(
            "INSERT INTO api_tokens (hash, owner, scopes, label, created_at) VALUES (%s, %s, %s, %s, %s)",
            (digest, owner, ",".join(scopes), label, time.time()),
        )


def token_by_hash(conn: Connection, digest: str) -> TokenRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM api_tokens WHERE hash = %s", (digest,)).fetchone()
    return _row(row) if row else None


def list_tokens(conn: Connection) -> list[TokenRow]:
    return [_row(row) for row in conn.execute(f"SELECT {_COLUMNS} FROM api_tokens ORDER BY created_at, hash")]


def count_active(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) FROM api_tokens WHERE revoked_at IS NULL").fetchone()
    return int(row[0]) if row else 0


def revoke_token(conn: Connection, hash_prefix: str) -> list[str]:
    """Revoke the one active token whose hash starts with the prefix; returns the hashes that
    matched. More than one match revokes nothing (the caller says it was ambiguous)."""
    with conn.transaction():
        rows = conn.execute(
            "SELECT hash FROM api_tokens WHERE revoked_at IS NULL AND starts_with(hash, %s) LIMIT 1000 FOR UPDATE",
            (hash_prefix,),
        ).fetchall()
        hashes = [r[0] for r in rows]
        if len(hashes) == 1:
            conn.execute("UPDATE api_tokens SET revoked_at = %s WHERE hash = %s", (time.time(), hashes[0]))
    return hashes
