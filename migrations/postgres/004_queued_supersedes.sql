-- The queued jobs that supersede memories (as SQLite's migrations/sqlite/013_queued_supersedes.sql):
-- a remember that supersedes a memory looks among them for one naming it already (a second
-- supersede of a memory is refused while the first is queued, store/postgres/jobs.py
-- _queued_superseder), without reading the owner's whole journal.
CREATE INDEX remember_jobs_queued_supersedes ON remember_jobs (owner)
    WHERE status = 'queued' AND supersedes IS NOT NULL;
