-- The expiry a memory had while a revision's body was its body: undo gives back both, so a
-- merge that renewed an expired fact (said again without an end) leaves it expired once undone
-- (store/sqlite/lifecycle.py undo_last_change). Revisions written before this kept no expiry:
-- they take the memory's present one, so undoing them leaves its expiry as it is, as before.
ALTER TABLE memory_revisions ADD COLUMN expires_at REAL;
UPDATE memory_revisions SET expires_at = (SELECT m.expires_at FROM memories m WHERE m.rowid = memory_revisions.memory_rowid);
