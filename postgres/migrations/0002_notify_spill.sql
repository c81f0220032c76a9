-- Notifications longer than NOTIFY carries (8000 bytes) wait here; the
-- notification names the row. Rows older than a few minutes are removed.
CREATE TABLE notify_spill (
  id      BIGSERIAL PRIMARY KEY,
  at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  payload TEXT NOT NULL
);
