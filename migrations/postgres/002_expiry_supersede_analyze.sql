-- Facts that expire, facts that replace others, and facts extracted from a text (as SQLite's
-- migrations/sqlite/012_expiry_supersede_analyze.sql).
--
-- expires_at: from when a memory stops being recalled or listed (it is kept until purged or
-- forgotten). A job carries the one its caller gave; curation copies it onto the memory the job
-- ends in (store/postgres/jobs.py mark_done).
ALTER TABLE remember_jobs ADD COLUMN expires_at double precision;
ALTER TABLE memories ADD COLUMN expires_at double precision;

-- supersedes: the memory ids (comma-separated) the job's fact replaces; once curated, they are
-- retired with superseded_by naming the memory it ended in. A superseded memory keeps its body
-- and history, leaves the indexes like a merged one, and undo of the new memory brings it back.
ALTER TABLE remember_jobs ADD COLUMN supersedes text;
ALTER TABLE memories ADD COLUMN superseded_by text COLLATE "C";

-- source_job_id: the analyze request a fact was extracted from. The request is a journal row
-- of its own (status done, decision 'analyzed', no memory) that holds the source text and is
-- never curated; forgetting it erases that text.
ALTER TABLE remember_jobs ADD COLUMN source_job_id text COLLATE "C";

CREATE INDEX memories_expiring ON memories (owner, expires_at) WHERE expires_at IS NOT NULL AND status = 'live';
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX remember_jobs_source ON remember_jobs (source_job_id) WHERE source_job_id IS NOT NULL;
-- adjacent(): a memory's neighbours in its lane by creation order, each one index seek.
CREATE INDEX memories_lane_created ON memories (lane_id, created_at, pk) WHERE status = 'live';
