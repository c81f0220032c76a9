-- Lists of recent checks (GET /v1/checks), newest first, per tenant.
CREATE INDEX checks_recent ON checks(tenant, id);
