-- Console sessions ended by signing out, until they would have expired: a
-- copy of the cookie is refused from then on.
CREATE TABLE console_signouts (
  nonce TEXT PRIMARY KEY,
  until TIMESTAMPTZ NOT NULL
);
