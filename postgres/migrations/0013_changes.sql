-- Changes replicas tell each other about (Notify), kept a few minutes. A
-- writer inserts its change in its own transaction; every replica reads
-- the rows it has not seen. xid is the inserting transaction, so that a
-- reader knows which rows may still commit below the highest id it saw:
-- those of transactions at or above its snapshot's xmin. Only the
-- integrating replica sends NOTIFY (a wake-up, no payload), so no two
-- replicas' commits queue on the database's notification lock.
CREATE TABLE changes (
  id      BIGSERIAL PRIMARY KEY,
  xid     XID8 NOT NULL DEFAULT pg_current_xact_id(),
  at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  payload TEXT NOT NULL
);
CREATE INDEX changes_xid ON changes (xid);
