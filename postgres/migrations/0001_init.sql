-- rein on PostgreSQL. Times are fixed-width UTC text (as in the SQLite
-- store), so that they compare as strings in time order and read back
-- exactly as written.

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

-- outbox_seq: the outbox row of the check's first audit entry; its index in
-- the log is audit_entries.idx of that row once the integrator placed it.
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
  outbox_seq  BIGINT,
  record      TEXT NOT NULL,
  result      TEXT
);
CREATE UNIQUE INDEX checks_request ON checks(key_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX checks_session ON checks(tenant, session, created_at);
CREATE INDEX checks_session_action ON checks(tenant, session, action_hash);

CREATE TABLE approvals (
  id               TEXT PRIMARY KEY,
  tenant           TEXT NOT NULL,
  status           TEXT NOT NULL,
  action_hash      TEXT NOT NULL,
  agent            TEXT NOT NULL,
  session          TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  grant_expires_at TEXT,
  record           TEXT NOT NULL
);
CREATE INDEX approvals_action ON approvals(tenant, action_hash, created_at);
CREATE INDEX approvals_status ON approvals(tenant, status, id);
CREATE UNIQUE INDEX approvals_one_pending ON approvals(tenant, action_hash) WHERE status = 'pending';
CREATE INDEX approvals_due_pending ON approvals(expires_at) WHERE status = 'pending';
CREATE INDEX approvals_due_grant ON approvals(grant_expires_at) WHERE status = 'approved';

CREATE TABLE questions (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  status     TEXT NOT NULL,
  agent      TEXT NOT NULL,
  session    TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  record     TEXT NOT NULL
);
CREATE INDEX questions_status ON questions(tenant, status, id);
CREATE INDEX questions_due ON questions(expires_at) WHERE status = 'pending';

CREATE TABLE locks (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  removed_at TEXT,
  record     TEXT NOT NULL
);
CREATE INDEX locks_active ON locks(removed_at);

CREATE TABLE sessions (
  tenant TEXT NOT NULL,
  id     TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (tenant, id)
);

CREATE TABLE policies (
  seq       BIGSERIAL PRIMARY KEY,
  tenant    TEXT NOT NULL,
  version   TEXT NOT NULL,
  source    TEXT NOT NULL,
  loaded_at TEXT NOT NULL,
  loaded_by TEXT NOT NULL,
  origin    TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
  seq    BIGSERIAL PRIMARY KEY,
  record TEXT NOT NULL
);

CREATE TABLE meta (
  k TEXT PRIMARY KEY,
  v TEXT NOT NULL
);

-- The audit outbox: every writer adds its entries here, in the transaction
-- of its state change, as canonical bytes around the place of the index.
CREATE TABLE audit_outbox (
  seq    BIGSERIAL PRIMARY KEY,
  tenant TEXT NOT NULL,
  kind   TEXT NOT NULL,
  head   BYTEA NOT NULL,
  tail   BYTEA NOT NULL
);

-- The audit log: exact canonical bytes, contiguous indexes from 0, placed
-- by the one integrator.
CREATE TABLE audit_entries (
  idx        BIGINT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  kind       TEXT NOT NULL,
  body       BYTEA NOT NULL,
  outbox_seq BIGINT NOT NULL UNIQUE
);

-- The log head: its size, and the term of the integrator that may extend
-- it. Each new integrator takes the next term; every extension is a
-- compare-and-set on (size, term), so an integrator that lost its place
-- can never write.
CREATE TABLE audit_head (
  one    INT PRIMARY KEY CHECK (one = 1),
  size   BIGINT NOT NULL,
  term   BIGINT NOT NULL,
  holder TEXT NOT NULL
);
INSERT INTO audit_head VALUES (1, 0, 0, '');

CREATE TABLE audit_tree (
  record BIGINT PRIMARY KEY,
  hashes BYTEA NOT NULL
);
CREATE TABLE audit_checkpoints (
  size      BIGINT PRIMARY KEY,
  note      TEXT NOT NULL,
  signed_at TEXT NOT NULL
);
CREATE TABLE audit_keys (
  verifier TEXT PRIMARY KEY,
  from_at  TEXT NOT NULL,
  to_at    TEXT
);

CREATE FUNCTION rein_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER audit_entries_append_only BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_tree_append_only BEFORE UPDATE OR DELETE ON audit_tree
  FOR EACH ROW EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_tree_no_truncate BEFORE TRUNCATE ON audit_tree
  FOR EACH STATEMENT EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
  FOR EACH ROW EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION rein_append_only();
