-- The webhook delivery log: every attempt.
CREATE TABLE webhook_deliveries (
  seq    INTEGER PRIMARY KEY AUTOINCREMENT,
  record TEXT NOT NULL
);
