-- One index for a session's checks instead of two (as in the SQLite
-- store): session.repeats, counted by a direct seek (every check reads
-- it), and a session's checks newest first, whose ids are sorted from the
-- index before the page of records is read. Each index costs every check
-- an insertion and its WAL record.
DROP INDEX checks_session;
DROP INDEX checks_session_action;
CREATE INDEX checks_session ON checks(tenant, session, action_hash, id);
