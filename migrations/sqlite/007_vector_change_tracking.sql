-- Every change that can change a lane's vectors (a memory created, its body, status or
-- vector changed) bumps the lane's vec_version and stamps the memory with it, so a
-- process keeping the lane's vectors in memory can fetch just what changed since.
ALTER TABLE lanes ADD COLUMN vec_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN vec_seq INTEGER NOT NULL DEFAULT 0;

CREATE INDEX memories_lane_vec_seq ON memories (lane_id, vec_seq);

CREATE TRIGGER memories_vec_insert AFTER INSERT ON memories
BEGIN
    UPDATE lanes SET vec_version = vec_version + 1 WHERE id = NEW.lane_id;
    UPDATE memories SET vec_seq = (SELECT vec_version FROM lanes WHERE id = NEW.lane_id) WHERE rowid = NEW.rowid;
END;

CREATE TRIGGER memories_vec_update AFTER UPDATE OF vector_model, status, body ON memories
BEGIN
    UPDATE lanes SET vec_version = vec_version + 1 WHERE id = NEW.lane_id;
    UPDATE memories SET vec_seq = (SELECT vec_version FROM lanes WHERE id = NEW.lane_id) WHERE rowid = NEW.rowid;
END;
