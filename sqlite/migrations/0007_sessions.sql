-- Sessions: counters kept with each recorded check, read by the next one.
CREATE TABLE sessions (
  tenant TEXT NOT NULL,
  id     TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (tenant, id)
);
-- Earlier checks of one action in one session (session.repeats).
CREATE INDEX checks_session_action ON checks(tenant, session, action_hash);
-- A check's reported result (one per check).
ALTER TABLE checks ADD COLUMN result TEXT;
