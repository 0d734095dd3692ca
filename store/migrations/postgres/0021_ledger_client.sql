-- Step 21: ledger.client, who a call was made for when it was not the
-- daemon's own work: the proxy's client, by its token's name ('' for the
-- daemon's calls), so that what each client spent is read from the book
-- the limiter keeps, per day, and nobody else's count.
ALTER TABLE ledger ADD COLUMN client TEXT COLLATE "C" NOT NULL DEFAULT '';
