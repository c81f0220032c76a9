-- One index for a session's checks instead of two. Each index ordered by
-- session puts every check on a page of its own session's part of the
-- index, so with many sessions at once each index costs a page written per
-- check at commit. This one serves both readers: a session's checks newest
-- first (ids sort by creation time), and session.repeats, counted from the
-- index alone (action_hash is in it).
DROP INDEX checks_session;
DROP INDEX checks_session_action;
CREATE INDEX checks_session ON checks(tenant, session, id, action_hash);
