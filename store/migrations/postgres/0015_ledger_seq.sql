-- Step 15: the ledger in write order. Each write of a quota key's ledger
-- (a call's rows, a call given back) takes the next number of that key's
-- counter by updating its row, which it holds locked until it commits: the
-- next writer of the key waits for that commit and reads the number it
-- left. So the numbers are the order the writes committed, as SQLite's one
-- writer makes them, which a sequence's are not (a transaction that took a
-- lower value may commit after a reader saw a higher one). A reader that
-- kept the counter it last read reads only the rows numbered after it
-- (docs/explanation/quota.md, "The ledger in write order"). Rows written before
-- numbers are 0: older than any counter.
CREATE TABLE ledger_seq (
  quota_key TEXT COLLATE "C" PRIMARY KEY,
  last      BIGINT NOT NULL
);
ALTER TABLE ledger ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger_given_back ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX ledger_written ON ledger (quota_key, seq);
CREATE INDEX ledger_given_back_written ON ledger_given_back (quota_key, seq);
