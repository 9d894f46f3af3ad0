-- Re-embedding with another model builds a new vector table beside the old one;
-- embedding_meta names the table searches use, so the switch is one UPDATE.
ALTER TABLE embedding_meta ADD COLUMN vector_table TEXT NOT NULL DEFAULT 'memory_vectors';

-- An unfinished `memwal-mcp reindex` (at most one): where it got to, so it can resume.
CREATE TABLE reindex_state (
    singleton        INTEGER PRIMARY KEY CHECK (singleton = 1),
    model_id         TEXT NOT NULL,
    dim              INTEGER NOT NULL,
    vector_table     TEXT NOT NULL,
    last_rowid       INTEGER NOT NULL DEFAULT 0,
    started_at       REAL NOT NULL
);
