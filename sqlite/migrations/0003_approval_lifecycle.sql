-- Approvals move past pending: grants expire, the sweeper finds what is due.
ALTER TABLE approvals ADD COLUMN grant_expires_at TEXT;
CREATE INDEX approvals_due_pending ON approvals(expires_at) WHERE status = 'pending';
CREATE INDEX approvals_due_grant ON approvals(grant_expires_at) WHERE status = 'approved';
