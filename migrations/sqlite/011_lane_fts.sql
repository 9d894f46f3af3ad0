-- Full text moves from one FTS5 table per owner to one per lane (owner, namespace), so
-- BM25 statistics are per namespace: what an owner keeps in other namespaces no longer
-- moves a memory's word score. store/fts.py drops the per-owner tables and builds the
-- per-lane ones in this same transaction.
CREATE TABLE lane_fts (
    lane_id INTEGER PRIMARY KEY REFERENCES lanes (id)
);

-- Characters of each lane's live bodies, beside live_count (009): recall's length factor
-- uses the lane's mean length, for the same reason, instead of the owner's (004's table goes).
ALTER TABLE lanes ADD COLUMN live_chars INTEGER NOT NULL DEFAULT 0;

UPDATE lanes SET live_chars = (
    SELECT COALESCE(SUM(LENGTH(m.body)), 0) FROM memories m WHERE m.lane_id = lanes.id AND m.status = 'live'
);

DROP TRIGGER lanes_live_insert;
DROP TRIGGER lanes_live_update;
DROP TRIGGER lanes_live_delete;

CREATE TRIGGER lanes_live_insert AFTER INSERT ON memories WHEN NEW.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count + 1, live_chars = live_chars + LENGTH(NEW.body) WHERE id = NEW.lane_id;
END;

CREATE TRIGGER lanes_live_update AFTER UPDATE OF status, lane_id, body ON memories
    WHEN OLD.status = 'live' OR NEW.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count - 1, live_chars = live_chars - LENGTH(OLD.body)
        WHERE id = OLD.lane_id AND OLD.status = 'live';
    UPDATE lanes SET live_count = live_count + 1, live_chars = live_chars + LENGTH(NEW.body)
        WHERE id = NEW.lane_id AND NEW.status = 'live';
END;

CREATE TRIGGER lanes_live_delete AFTER DELETE ON memories WHEN OLD.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count - 1, live_chars = live_chars - LENGTH(OLD.body) WHERE id = OLD.lane_id;
END;

DROP TRIGGER owner_text_stats_insert;
DROP TRIGGER owner_text_stats_update;
DROP TRIGGER owner_text_stats_delete;
DROP TABLE owner_text_stats;
