-- One index for a session's checks instead of two. Each index ordered by
-- session puts every check on a page of its own session's part of the
-- index, so with many sessions at once each such index costs a page
-- written per check at commit. This one serves both readers:
-- session.repeats, counted from the index alone by a direct seek (it runs
-- on the decision path), and a session's checks newest first, whose ids
-- are sorted from the index before the page of records is read.
DROP INDEX checks_session;
DROP INDEX checks_session_action;
CREATE INDEX checks_session ON checks(tenant, session, action_hash, id);
