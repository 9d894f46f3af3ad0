-- memwal-mcp initial schema.
-- The journal (remember_jobs) is the source of truth; memories are derived from it.

-- One row per (owner, namespace): the unit of curation and of leasing.
CREATE TABLE lanes (
    id               INTEGER PRIMARY KEY,
    owner            TEXT NOT NULL,
    namespace        TEXT NOT NULL,
    lease_holder     TEXT,
    lease_expires_at REAL,
    UNIQUE (owner, namespace)
);

-- The journal: every remember is an event that is kept.
CREATE TABLE remember_jobs (
    seq              INTEGER PRIMARY KEY,          -- arrival order
    id               TEXT NOT NULL UNIQUE,         -- public job id (random, leaks no counts)
    owner            TEXT NOT NULL,
    namespace        TEXT NOT NULL,
    lane_id          INTEGER NOT NULL REFERENCES lanes (id),
    text             TEXT NOT NULL,
    idempotency_key  TEXT,
    occurred_at      REAL,                         -- when the fact happened, if the caller said so
    status           TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'done', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  REAL NOT NULL DEFAULT 0,
    decision         TEXT,                         -- created / occurrence / ...
    memory_id        TEXT,                         -- the memory the job ended up in
    error            TEXT,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL
);

CREATE INDEX remember_jobs_lane_queue ON remember_jobs (lane_id, seq) WHERE status = 'queued';
CREATE INDEX remember_jobs_owner_queue ON remember_jobs (owner, namespace, seq) WHERE status = 'queued';
CREATE INDEX remember_jobs_memory ON remember_jobs (memory_id) WHERE memory_id IS NOT NULL;

-- Curated facts. `norm_key` is a hash of the normalized text, for exact-match folding.
CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY,          -- also the rowid of the FTS and vector rows
    id               TEXT NOT NULL UNIQUE,         -- public memory id
    owner            TEXT NOT NULL,
    namespace        TEXT NOT NULL,
    lane_id          INTEGER NOT NULL REFERENCES lanes (id),
    body             TEXT NOT NULL,
    norm_key         TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'retired', 'forgotten')),
    retired_into     TEXT,
    source_job_id    TEXT NOT NULL,
    occurrences      INTEGER NOT NULL DEFAULT 0,   -- jobs folded in as occurrences
    vector_model     TEXT,                         -- model id of its vector row; NULL = not embedded yet
    occurred_at      REAL,                         -- when the fact happened (caller-given), else NULL
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL
);

CREATE INDEX memories_lane_norm ON memories (lane_id, norm_key) WHERE status = 'live';
CREATE INDEX memories_lane_created ON memories (lane_id, created_at);
CREATE INDEX memories_owner_created ON memories (owner, created_at);
CREATE INDEX memories_unembedded ON memories (lane_id) WHERE status = 'live' AND vector_model IS NULL;
CREATE INDEX memories_retired_into ON memories (retired_into) WHERE retired_into IS NOT NULL;

-- Previous bodies: every change of a memory's body keeps the body it replaced.
CREATE TABLE memory_revisions (
    id               INTEGER PRIMARY KEY,
    memory_rowid     INTEGER NOT NULL REFERENCES memories (rowid),
    body             TEXT NOT NULL,
    decision         TEXT NOT NULL,                -- what replaced this body: updated / consolidated / appended
    job_id           TEXT,                         -- the job whose proposal caused the change
    llm_model        TEXT,                         -- the model that decided, if any
    guard            TEXT,                         -- MergeGuard outcome and figures
    merged_ids       TEXT,                         -- memories retired into this one by the change (comma-separated)
    created_at       REAL NOT NULL
);

CREATE INDEX memory_revisions_memory ON memory_revisions (memory_rowid, id);

-- Full-text index over live memory bodies; rowid = memories.rowid.
-- Porter stemming so 'deploys' finds 'deploy'; unicode61 folds case and diacritics in any script.
CREATE VIRTUAL TABLE memories_fts USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2');

-- Which embedding model built the vectors (one row). The vector table itself is
-- created by the store once the model's dimension is known.
CREATE TABLE embedding_meta (
    singleton        INTEGER PRIMARY KEY CHECK (singleton = 1),
    model_id         TEXT NOT NULL,
    dim              INTEGER NOT NULL,
    created_at       REAL NOT NULL
);

-- Curation markers, counted per decision (memwal-mcp stats).
CREATE TABLE curation_counters (
    marker           TEXT PRIMARY KEY,
    count            INTEGER NOT NULL DEFAULT 0
);
