-- Bearer tokens for the HTTP transports. Only SHA-256 hashes are stored; the token
-- itself is shown once, when it is created.
CREATE TABLE api_tokens (
    hash             TEXT PRIMARY KEY,             -- 'sha256:' + hex digest of the token
    owner            TEXT NOT NULL,
    scopes           TEXT NOT NULL,                -- comma-separated: read, write
    label            TEXT,
    created_at       REAL NOT NULL,
    revoked_at       REAL
);
