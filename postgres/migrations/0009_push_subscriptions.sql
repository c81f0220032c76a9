-- Web Push subscriptions: the browsers that are told of new approvals for
-- the person (the key name in a tenant) who subscribed. A browser that
-- subscribes again replaces its row (the endpoint is unique).
CREATE TABLE push_subscriptions (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  name       TEXT NOT NULL,
  endpoint   TEXT NOT NULL UNIQUE,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  label      TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX push_subscriptions_person ON push_subscriptions(tenant, name);
