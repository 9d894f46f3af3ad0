-- memwal-mcp on PostgreSQL + pgvector: the schema SQLite reaches through its migrations 001-011,
-- in one step. The journal (remember_jobs) is the source of truth; memories are derived from it.
-- Times are seconds since the epoch (double precision), as on SQLite, so records cross unchanged.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row per (owner, namespace): the unit of curation, of leasing and of word statistics.
-- live_count / live_chars / live_tokens are kept by a trigger on memories (below), so every
-- writer keeps them right: recall's length factor and BM25's document count and mean length.
CREATE TABLE lanes (
    id               bigserial PRIMARY KEY,
    owner            text COLLATE "C" NOT NULL,
    namespace        text COLLATE "C" NOT NULL,
    lease_holder     text,
    lease_expires_at double precision,
    live_count       bigint NOT NULL DEFAULT 0,
    live_chars       bigint NOT NULL DEFAULT 0,
    live_tokens      bigint NOT NULL DEFAULT 0,
    UNIQUE (owner, namespace)
);

-- The journal: every remember is an event that is kept.
CREATE TABLE remember_jobs (
    seq              bigserial PRIMARY KEY,        -- arrival order
    id               text COLLATE "C" NOT NULL UNIQUE,         -- public job id (random, leaks no counts)
    owner            text COLLATE "C" NOT NULL,
    namespace        text COLLATE "C" NOT NULL,
    lane_id          bigint NOT NULL REFERENCES lanes (id),
    text             text NOT NULL,
    idempotency_key  text,
    occurred_at      double precision,
    status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'done', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  double precision NOT NULL DEFAULT 0,
    decision         text,
    memory_id        text,
    error            text,
    created_at       double precision NOT NULL,
    updated_at       double precision NOT NULL
);

CREATE INDEX remember_jobs_lane_queue ON remember_jobs (lane_id, seq) WHERE status = 'queued';
CREATE INDEX remember_jobs_due ON remember_jobs (next_attempt_at) WHERE status = 'queued';
CREATE INDEX remember_jobs_memory ON remember_jobs (memory_id) WHERE memory_id IS NOT NULL;
CREATE INDEX remember_jobs_owner ON remember_jobs (owner, seq);
-- Request idempotency: a retried remember with the same key is the same event.
-- Deliberately no content uniqueness: re-stating a fact is a legitimate new event.
CREATE UNIQUE INDEX remember_jobs_owner_idempotency_key
    ON remember_jobs (owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Curated facts. `norm_key` is a hash of the normalized text, for exact-match folding.
-- `tsv` holds the words of a live body (NULL once retired or forgotten), `doc_len` how many
-- tokens the body has: both computed by memwal_mcp/store/postgres/words.py.
CREATE TABLE memories (
    pk               bigserial PRIMARY KEY,
    id               text COLLATE "C" NOT NULL UNIQUE,
    owner            text COLLATE "C" NOT NULL,
    namespace        text COLLATE "C" NOT NULL,
    lane_id          bigint NOT NULL REFERENCES lanes (id),
    body             text NOT NULL,
    norm_key         text NOT NULL,
    status           text NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'retired', 'forgotten')),
    retired_into     text,
    source_job_id    text NOT NULL,
    occurrences      integer NOT NULL DEFAULT 0,
    vector_model     text,
    occurred_at      double precision,
    created_at       double precision NOT NULL,
    updated_at       double precision NOT NULL,
    tsv              tsvector,
    doc_len          integer NOT NULL DEFAULT 0,
    CHECK (tsv IS NULL OR status = 'live')
);

CREATE INDEX memories_lane_norm ON memories (lane_id, norm_key) WHERE status = 'live';
CREATE INDEX memories_lane_pk ON memories (lane_id, pk) WHERE status = 'live';
CREATE INDEX memories_owner_created ON memories (owner, created_at, id);
CREATE INDEX memories_unembedded ON memories (lane_id) WHERE status = 'live' AND vector_model IS NULL;
CREATE INDEX memories_retired_into ON memories (retired_into) WHERE retired_into IS NOT NULL;
CREATE INDEX memories_words ON memories USING gin (tsv);

-- Previous bodies: every change of a memory's body keeps the body it replaced.
CREATE TABLE memory_revisions (
    id               bigserial PRIMARY KEY,
    memory_pk        bigint NOT NULL REFERENCES memories (pk),
    body             text NOT NULL,
    decision         text NOT NULL,
    job_id           text,
    llm_model        text,
    guard            text,
    merged_ids       text,                         -- memories retired into this one by the change (comma-separated)
    created_at       double precision NOT NULL
);

CREATE INDEX memory_revisions_memory ON memory_revisions (memory_pk, id);

-- How many live memories of a lane hold each word (BM25's document frequency), kept by a
-- trigger on memories.tsv: a seek per query word, as FTS5's vocabulary table gives SQLite.
-- A word no live memory of the lane holds any more has no row (a forgotten text's words go).
CREATE TABLE lane_terms (
    lane_id          bigint NOT NULL REFERENCES lanes (id),
    lexeme           text NOT NULL,
    docs             integer NOT NULL,
    PRIMARY KEY (lane_id, lexeme)
);

-- Which embedding model built the vectors (one row), and the table searches use. The vector
-- table itself is created by the store once the model's dimension is known.
CREATE TABLE embedding_meta (
    singleton        integer PRIMARY KEY CHECK (singleton = 1),
    model_id         text NOT NULL,
    dim              integer NOT NULL,
    created_at       double precision NOT NULL,
    vector_table     text NOT NULL DEFAULT 'memory_vectors'
);

-- An unfinished `memwal-mcp reindex` (at most one): where it got to, so it can resume.
CREATE TABLE reindex_state (
    singleton        integer PRIMARY KEY CHECK (singleton = 1),
    model_id         text NOT NULL,
    dim              integer NOT NULL,
    vector_table     text NOT NULL,
    last_rowid       bigint NOT NULL DEFAULT 0,
    started_at       double precision NOT NULL
);

-- Curation markers, counted per decision (memwal-mcp stats).
CREATE TABLE curation_counters (
    marker           text PRIMARY KEY,
    count            bigint NOT NULL DEFAULT 0
);

-- Forget: content is deleted, a tombstone says that (and when) it happened.
CREATE TABLE forgotten (
    memory_id        text COLLATE "C" PRIMARY KEY,
    owner            text COLLATE "C" NOT NULL,
    namespace        text COLLATE "C" NOT NULL,
    jobs             integer NOT NULL,
    forgotten_at     double precision NOT NULL
);

CREATE INDEX forgotten_owner ON forgotten (owner, forgotten_at);

-- Bearer tokens for the HTTP transports: only SHA-256 hashes are stored.
CREATE TABLE api_tokens (
    hash             text PRIMARY KEY,
    owner            text COLLATE "C" NOT NULL,
    scopes           text NOT NULL,
    label            text,
    created_at       double precision NOT NULL,
    revoked_at       double precision
);

-- Memories created on the no-LLM path whose nominees are still to be counted.
CREATE TABLE deferred_nominations (
    memory_pk        bigint PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
    lane_id          bigint NOT NULL,
    job_id           text NOT NULL
);

CREATE INDEX deferred_nominations_lane ON deferred_nominations (lane_id, memory_pk);

-- A lane's live totals follow its memories, whoever writes them.
CREATE FUNCTION memwal_lane_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'live' THEN
        UPDATE lanes SET live_count = live_count - 1, live_chars = live_chars - length(OLD.body),
            live_tokens = live_tokens - OLD.doc_len
        WHERE id = OLD.lane_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'live' THEN
        UPDATE lanes SET live_count = live_count + 1, live_chars = live_chars + length(NEW.body),
            live_tokens = live_tokens + NEW.doc_len
        WHERE id = NEW.lane_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_lane_totals AFTER INSERT OR DELETE OR UPDATE OF status, lane_id, body, doc_len ON memories
    FOR EACH ROW EXECUTE FUNCTION memwal_lane_totals();

-- Document frequencies follow the words of live bodies. Lexemes come sorted out of a
-- tsvector, so two writers touching the same words lock them in the same order.
CREATE FUNCTION memwal_lane_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.tsv IS NOT NULL THEN
            UPDATE lane_terms t SET docs = t.docs - 1
        FROM unnest(OLD.tsv) u WHERE t.lane_id = OLD.lane_id AND t.lexeme = u.lexeme;
        DELETE FROM lane_terms WHERE lane_id = OLD.lane_id AND docs <= 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.tsv IS NOT NULL THEN
        INSERT INTO lane_terms (lane_id, lexeme, docs)
            SELECT NEW.lane_id, u.lexeme, 1 FROM unnest(NEW.tsv) u ORDER BY u.lexeme
        ON CONFLICT (lane_id, lexeme) DO UPDATE SET docs = lane_terms.docs + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_lane_terms AFTER INSERT OR DELETE OR UPDATE OF tsv, lane_id ON memories
    FOR EACH ROW EXECUTE FUNCTION memwal_lane_terms();
