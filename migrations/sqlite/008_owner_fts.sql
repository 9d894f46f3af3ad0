-- Full text moves from one shared FTS5 table to one table per owner (owner_fts_<id>),
-- so BM25 statistics are per owner: one owner's words no longer move another owner's
-- scores, and a search no longer joins every match back to `memories` to filter.
-- store/fts.py creates and fills the per-owner tables in this same transaction.
CREATE TABLE owner_fts (
    id    INTEGER PRIMARY KEY,
    owner TEXT NOT NULL UNIQUE
);

DROP TABLE memories_fts;
