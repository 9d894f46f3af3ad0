-- An import writes thousands of memories of one lane in one transaction. Each INSERT's row
-- triggers then update the same lanes row and the same lane_terms rows again and again, and
-- PostgreSQL keeps every version of a row updated within one transaction: the cost grows with
-- the square of the batch (10,000 memories in one transaction took 60 s, in batches of 1,000
-- 6 s). While `memwal.bulk_import` is 'on' (SET LOCAL, in that transaction only), an INSERT
-- leaves both totals to the importer, which adds each batch's in one statement per table
-- (store/postgres/transfer_import.py). Every other write keeps them as before.
CREATE OR REPLACE FUNCTION memwal_lane_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND current_setting('memwal.bulk_import', true) = 'on' THEN
        RETURN NULL;
    END IF;
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

CREATE OR REPLACE FUNCTION memwal_lane_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND current_setting('memwal.bulk_import', true) = 'on' THEN
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
