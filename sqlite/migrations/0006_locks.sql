-- Locks (kill switches); removed ones are kept for the record.
CREATE TABLE locks (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  removed_at TEXT,
  record     TEXT NOT NULL
);
CREATE INDEX locks_active ON locks(removed_at);
