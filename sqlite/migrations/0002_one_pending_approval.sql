-- At most one pending approval per action: concurrent checks of the same
-- action join one approval instead of creating several.
CREATE UNIQUE INDEX approvals_one_pending ON approvals(tenant, action_hash) WHERE status = 'pending';
