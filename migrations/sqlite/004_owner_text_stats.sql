-- Per-owner totals of live memory text, kept by triggers so every writer keeps them
-- right. Recall uses the mean length to discount word matches in unusually short texts.
CREATE TABLE owner_text_stats (
    owner            TEXT PRIMARY KEY,
    live_count       INTEGER NOT NULL DEFAULT 0,
    live_chars       INTEGER NOT NULL DEFAULT 0
);

INSERT INTO owner_text_stats (owner, live_count, live_chars)
    SELECT owner, COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM memories WHERE status = 'live' GROUP BY owner;

CREATE TRIGGER owner_text_stats_insert AFTER INSERT ON memories WHEN NEW.status = 'live'
BEGIN
    INSERT INTO owner_text_stats (owner, live_count, live_chars) VALUES (NEW.owner, 1, LENGTH(NEW.body))
        ON CONFLICT (owner) DO UPDATE SET live_count = live_count + 1, live_chars = live_chars + LENGTH(NEW.body);
END;

CREATE TRIGGER owner_text_stats_update AFTER UPDATE OF body, status ON memories
    WHEN OLD.status = 'live' OR NEW.status = 'live'
BEGIN
    INSERT INTO owner_text_stats (owner, live_count, live_chars) VALUES (NEW.owner, 0, 0)
        ON CONFLICT (owner) DO NOTHING;
    UPDATE owner_text_stats SET
        live_count = live_count - (OLD.status = 'live') + (NEW.status = 'live'),
        live_chars = live_chars
            - (CASE WHEN OLD.status = 'live' THEN LENGTH(OLD.body) ELSE 0 END)
            + (CASE WHEN NEW.status = 'live' THEN LENGTH(NEW.body) ELSE 0 END)
    WHERE owner = NEW.owner;
END;

CREATE TRIGGER owner_text_stats_delete AFTER DELETE ON memories WHEN OLD.status = 'live'
BEGIN
    UPDATE owner_text_stats SET live_count = live_count - 1, live_chars = live_chars - LENGTH(OLD.body)
    WHERE owner = OLD.owner;
END;
