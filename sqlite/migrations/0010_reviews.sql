-- Reviews after the fact: allowed checks, results and sessions people look at.
CREATE TABLE reviews (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  status     TEXT NOT NULL,
  agent      TEXT NOT NULL,
  session    TEXT NOT NULL,
  created_at TEXT NOT NULL,
  record     TEXT NOT NULL
);
CREATE INDEX reviews_status ON reviews(tenant, status, id);
