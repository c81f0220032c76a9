-- Entries written once. A writer's entries stay where it wrote them, in
-- audit_outbox (canonical bytes around the place of the index), for good:
-- the integrator no longer copies them into audit_entries and deletes
-- them, it only writes each one's index (audit_index, two numbers a row)
-- and takes its number off audit_pending, the queue of what waits for an
-- index. The integrating replica's own batches still write their entries
-- once, straight into audit_entries; entries placed before this migration
-- are there too, unchanged. audit_log is the one log both make.
CREATE TABLE audit_pending (
  seq BIGINT PRIMARY KEY
);
INSERT INTO audit_pending SELECT seq FROM audit_outbox;

CREATE FUNCTION rein_audit_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_pending SELECT seq FROM added;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_outbox_pending AFTER INSERT ON audit_outbox
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION rein_audit_pending();

CREATE TABLE audit_index (
  idx BIGINT PRIMARY KEY,
  seq BIGINT NOT NULL UNIQUE
);

CREATE VIEW audit_log AS
  SELECT idx, tenant, kind, body, NULL::bytea AS head, NULL::bytea AS tail, outbox_seq FROM audit_entries
  UNION ALL
  SELECT i.idx, o.tenant, o.kind, NULL::bytea, o.head, o.tail, i.seq FROM audit_index i JOIN audit_outbox o ON o.seq = i.seq;

-- Which index each outbox row has, however it was placed.
CREATE VIEW audit_placed AS
  SELECT idx, outbox_seq FROM audit_entries
  UNION ALL
  SELECT idx, seq FROM audit_index;

CREATE TRIGGER audit_outbox_append_only BEFORE UPDATE OR DELETE ON audit_outbox
  FOR EACH ROW EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_outbox_no_truncate BEFORE TRUNCATE ON audit_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_index_append_only BEFORE UPDATE OR DELETE ON audit_index
  FOR EACH ROW EXECUTE FUNCTION rein_append_only();
CREATE TRIGGER audit_index_no_truncate BEFORE TRUNCATE ON audit_index
  FOR EACH STATEMENT EXECUTE FUNCTION rein_append_only();
