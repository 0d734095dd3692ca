-- The read API's tokens.
CREATE TABLE api_tokens (
  name         TEXT    PRIMARY KEY,
  hash         TEXT    NOT NULL UNIQUE,   -- hex SHA-256 of the token: the token itself is never kept
  plan         TEXT    NOT NULL,
  created_ms   INTEGER NOT NULL,
  last_used_ms INTEGER
) WITHOUT ROWID;
