-- The dashboard's activity figures (store/postgres/jobs.py journal_counts), as SQLite's
-- migrations/sqlite/014_journal_counts.sql: an owner's jobs by status, decision and day in one
-- GROUP BY over an index-only scan, not the journal's rows and their text.
CREATE INDEX remember_jobs_owner_counts ON remember_jobs (owner, status, decision, created_at);
