-- Forget: content is deleted, a tombstone says that (and when) it happened.
CREATE TABLE forgotten (
    memory_id        TEXT PRIMARY KEY,
    owner            TEXT NOT NULL,
    namespace        TEXT NOT NULL,
    jobs             INTEGER NOT NULL,             -- remember jobs whose text was erased with it
    forgotten_at     REAL NOT NULL
);

CREATE INDEX forgotten_owner ON forgotten (owner, forgotten_at);
