-- When a pending approval's next escalation is due (NULL: none left), so
-- that the sweep reads only the approvals due instead of every pending one.
-- Pending approvals from before this column are looked at once by the next
-- sweep, which stores their real time.
ALTER TABLE approvals ADD COLUMN escalate_at TEXT;
UPDATE approvals SET escalate_at = created_at
  WHERE status = 'pending' AND json_array_length(record, '$.escalations') > 0;
CREATE INDEX approvals_due_escalation ON approvals(escalate_at) WHERE status = 'pending' AND escalate_at IS NOT NULL;
