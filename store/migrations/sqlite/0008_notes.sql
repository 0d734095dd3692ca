-- The ledger's notes, and the database's id.
CREATE TABLE ledger_notes (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO ledger_notes (name, value) VALUES ('ledger_id', lower(hex(randomblob(8))));
