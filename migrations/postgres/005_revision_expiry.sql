-- The expiry a memory had while a revision's body was its body (as SQLite's
-- migrations/sqlite/014_revision_expiry.sql): undo gives back both. Revisions written before
-- this take the memory's present expiry, so undoing them leaves it as it is, as before.
ALTER TABLE memory_revisions ADD COLUMN expires_at double precision;
UPDATE memory_revisions r SET expires_at = m.expires_at FROM memories m WHERE m.pk = r.memory_pk;
