-- Questions: durable requests for human input.
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
