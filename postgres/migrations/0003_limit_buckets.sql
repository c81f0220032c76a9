-- Rate-limit token buckets shared by every replica.
CREATE TABLE limit_buckets (
  key    TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  at     TEXT NOT NULL
);
