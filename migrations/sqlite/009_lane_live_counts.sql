-- Live memories per lane, kept by triggers so every writer keeps them right. A word
-- search in some of an owner's namespaces uses them to decide between over-fetching
-- from the owner's full-text table and filtering by lane inside FTS5 (store/fts.py).
ALTER TABLE lanes ADD COLUMN live_count INTEGER NOT NULL DEFAULT 0;

UPDATE lanes SET live_count = (SELECT COUNT(*) FROM memories m WHERE m.lane_id = lanes.id AND m.status = 'live');

CREATE TRIGGER lanes_live_insert AFTER INSERT ON memories WHEN NEW.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count + 1 WHERE id = NEW.lane_id;
END;

CREATE TRIGGER lanes_live_update AFTER UPDATE OF status, lane_id ON memories
    WHEN OLD.status = 'live' OR NEW.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count - 1 WHERE id = OLD.lane_id AND OLD.status = 'live';
    UPDATE lanes SET live_count = live_count + 1 WHERE id = NEW.lane_id AND NEW.status = 'live';
END;

CREATE TRIGGER lanes_live_delete AFTER DELETE ON memories WHEN OLD.status = 'live'
BEGIN
    UPDATE lanes SET live_count = live_count - 1 WHERE id = OLD.lane_id;
END;
