-- Delegations of approver eligibility (out of office).
CREATE TABLE delegations (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  record     TEXT NOT NULL
);
CREATE INDEX delegations_tenant ON delegations(tenant, id);
