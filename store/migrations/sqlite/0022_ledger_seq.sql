-- The ledger in write order. Each write of a quota key's ledger (a call's
-- rows, a call given back) takes the next number of that key's counter,
-- in the transaction that writes it; SQLite's one writer makes the numbers
-- the order the writes committed, so a reader that kept the counter it
-- last read reads only the rows numbered after it (docs/explanation/quota.md, "The
-- ledger in write order"). Rows written before numbers are 0: older than
-- any counter.
CREATE TABLE ledger_seq (
  quota_key TEXT    PRIMARY KEY,
  last      INTEGER NOT NULL
) WITHOUT ROWID;
ALTER TABLE ledger ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_given_back ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX ledger_written ON ledger (quota_key, seq);
CREATE INDEX ledger_given_back_written ON ledger_given_back (quota_key, seq);
