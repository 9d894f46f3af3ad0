-- Rate limits shared by every replica on this database: one token bucket per caller (a token's
-- hash). `level` is the calls the bucket holds at `updated_at` (epoch seconds, the replicas'
-- clocks); it refills at the configured rate up to the burst. Replicas take allowance in small
-- grants under the row's lock (store/postgres/rates.py), so no request waits on curation's lock.
CREATE TABLE rate_buckets (
    key         text COLLATE "C" PRIMARY KEY,
    level       double precision NOT NULL,
    updated_at  double precision NOT NULL
);
