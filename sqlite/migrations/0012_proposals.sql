-- Proposals: "always allow" as a policy change an admin accepts or rejects.
CREATE TABLE proposals (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  status     TEXT NOT NULL,
  agent      TEXT NOT NULL,
  session    TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  record     TEXT NOT NULL
);
CREATE INDEX proposals_status ON proposals(tenant, status, id);
