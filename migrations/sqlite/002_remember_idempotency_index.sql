-- Request idempotency: a retried remember with the same key is the same event.
-- Deliberately no content uniqueness: re-stating a fact is a legitimate new event.
CREATE UNIQUE INDEX remember_jobs_owner_idempotency_key
    ON remember_jobs (owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
