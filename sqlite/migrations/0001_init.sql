-- Keys: the secret is stored only as its SHA-256.
CREATE TABLE keys (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  tenant      TEXT NOT NULL,
  roles       TEXT NOT NULL,
  groups_json TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE UNIQUE INDEX keys_active_name ON keys(tenant, name) WHERE revoked_at IS NULL;

CREATE TABLE checks (
  id          TEXT PRIMARY KEY,
  tenant      TEXT NOT NULL,
  key_id      TEXT NOT NULL,
  request_id  TEXT,
  agent       TEXT NOT NULL,
  session     TEXT NOT NULL,
  tool        TEXT NOT NULL,
  decision    TEXT NOT NULL,
  action_hash TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  audit_index INTEGER NOT NULL,
  record      TEXT NOT NULL
);
CREATE UNIQUE INDEX checks_request ON checks(key_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX checks_session ON checks(tenant, session, created_at);

CREATE TABLE approvals (
  id          TEXT PRIMARY KEY,
  tenant      TEXT NOT NULL,
  status      TEXT NOT NULL,
  action_hash TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  record      TEXT NOT NULL
);
CREATE INDEX approvals_action ON approvals(tenant, action_hash, created_at);
CREATE INDEX approvals_status ON approvals(tenant, status, created_at);

-- Every version of every policy tier ever activated; the newest per tenant is live.
CREATE TABLE policies (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant    TEXT NOT NULL,
  version   TEXT NOT NULL,
  source    TEXT NOT NULL,
  loaded_at TEXT NOT NULL,
  loaded_by TEXT NOT NULL,
  origin    TEXT NOT NULL
);

-- The audit log: exact canonical bytes, contiguous indexes from 0.
CREATE TABLE audit_entries (
  idx    INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  kind   TEXT NOT NULL,
  body   BLOB NOT NULL
);
CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries
BEGIN SELECT RAISE(ABORT, 'audit entries are append-only'); END;
CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
BEGIN SELECT RAISE(ABORT, 'audit entries are append-only'); END;

CREATE TABLE meta (
  k TEXT PRIMARY KEY,
  v TEXT NOT NULL
);
