-- Memories created on the no-LLM path whose nominees are still to be counted. Without an
-- LLM the outcome is CREATE whatever kNN finds, so curation writes the memory first and a
-- later pass counts its nominees (the curation_nominated markers) when no job is waiting.
CREATE TABLE deferred_nominations (
    memory_rowid INTEGER PRIMARY KEY REFERENCES memories (rowid) ON DELETE CASCADE,
    lane_id      INTEGER NOT NULL,
    job_id       TEXT NOT NULL
);
