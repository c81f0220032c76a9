-- The Merkle tree over audit_entries: per record, the hashes
-- tlog.StoredHashes returns for it, concatenated (32 bytes each).
CREATE TABLE audit_tree (
  record INTEGER PRIMARY KEY,
  hashes BLOB NOT NULL
);
-- Every signed checkpoint, by the tree size it covers.
CREATE TABLE audit_checkpoints (
  size      INTEGER PRIMARY KEY,
  note      TEXT NOT NULL,
  signed_at TEXT NOT NULL
);
-- Checkpoint signing keys (public halves) and when each was in use.
CREATE TABLE audit_keys (
  verifier TEXT PRIMARY KEY,
  from_at  TEXT NOT NULL,
  to_at    TEXT
);
CREATE TRIGGER audit_tree_no_update BEFORE UPDATE ON audit_tree
BEGIN SELECT RAISE(ABORT, 'the audit tree is append-only'); END;
CREATE TRIGGER audit_tree_no_delete BEFORE DELETE ON audit_tree
BEGIN SELECT RAISE(ABORT, 'the audit tree is append-only'); END;
CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;
