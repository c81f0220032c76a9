-- Passkeys (WebAuthn credentials) that confirm votes needing step-up.
CREATE TABLE passkeys (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  name       TEXT NOT NULL,
  record     TEXT NOT NULL
);
CREATE INDEX passkeys_person ON passkeys(tenant, name);
