-- Which tokenizer made a memory's tsvector (store/postgres/words.py VERSION): 1 stemmed with
-- Snowball English, 2 with FTS5's Porter, as SQLite's index does. Rows written before this
-- migration are version 1; the store re-tokenizes them when it opens (words_pass.py), and a
-- replica still running the code before it keeps writing 1, so the next start fixes those too.
ALTER TABLE memories ADD COLUMN words_version smallint NOT NULL DEFAULT 1;
CREATE INDEX memories_words_version ON memories (lane_id) WHERE status = 'live' AND words_version < 2;

-- The pass rewrites a lane's tsvectors under the write lock and counts the lane's words once
-- afterwards (while `memwal.words_pass` is 'on', SET LOCAL in its transaction only): a row
-- trigger per rewritten memory would update the same lane_terms rows thousands of times in one
-- transaction (007 says why that is quadratic). Every other write keeps them as before.
CREATE OR REPLACE FUNCTION memwal_lane_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND current_setting('memwal.bulk_import', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND current_setting('memwal.words_pass', true) = 'on' THEN
        RETURN NULL;
    END IF;
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
