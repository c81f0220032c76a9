-- One-time rewrites of stored records that a migration in SQL cannot make
-- (the redaction of secrets kept before rein redacted them): each is done
-- once, and recorded here by name.
CREATE TABLE rewrites (
  name    TEXT PRIMARY KEY,
  done_at TEXT NOT NULL
);
