package clients

import (
	"context"
	"database/sql"
)

// Counts are the API limiter's counts in the database's api_limits
// table (unlogged: a crash of the server empties it), shared by every host
// on it: ratelimit.NewPostgres takes them.
type Counts struct{ w *sql.DB }

// Counts returns the API limiter's counts, on PostgreSQL only: a SQLite
// database is not written for a read, and its one host counts in memory.
func (c *Clients) Counts() (Counts, bool) { return Counts{c.w}, c.pg }

// Allow is one decision: GCRA's step as one upsert on the client's row of
// api_limits, by the server's clock in µs. Concurrent requests of one
// client take turns on its row lock; each re-reads the row the previous
// one left (read committed), so hosts on one database share each count
// exactly. The SET expressions all see the row as it was, so allowed and
// tat agree.
func (c Counts) Allow(ctx context.Context, key string, increment, tolerance int64) (ok bool, now, tat int64, err error) {
	err = c.w.QueryRowContext(ctx, `WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now)
INSERT INTO api_limits AS l (key, tat, at, allowed)
SELECT ?1, c.now + ?2::bigint, c.now, true FROM c
ON CONFLICT (key) DO UPDATE SET
  allowed = greatest(l.tat, excluded.at) + ?2::bigint - excluded.at <= ?3::bigint,
  tat = CASE WHEN greatest(l.tat, excluded.at) + ?2::bigint - excluded.at <= ?3::bigint
             THEN greatest(l.tat, excluded.at) + ?2::bigint ELSE l.tat END,
  at = excluded.at
RETURNING allowed, at, tat`, key, increment, tolerance).Scan(&ok, &now, &tat)
	return ok, now, tat, err
}

// Sweep forgets the clients whose tat has passed: their rows say nothing
// an absent row does not.
func (c Counts) Sweep(ctx context.Context) error {
	_, err := c.w.ExecContext(ctx, `DELETE FROM api_limits WHERE tat < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`)
	return err
}
