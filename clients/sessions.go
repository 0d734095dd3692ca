package clients

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Sessions are the readers' site's sign-ins, kept in the database so that
// every replica on it honours one and a sign-out on any ends it on all.
// Only each session id's hash is kept: the id is a bearer credential, and
// a copy of the database must not sign anyone in.
type Sessions struct {
	w, r *sql.DB
	max  int
}

// NewSessions returns the sessions kept in db, at most max of them live:
// a sign-in past it ends the oldest, so that no loop of sign-ins grows the
// table without end.
func NewSessions(db Database, max int) *Sessions {
	return &Sessions{w: db.Writer(), r: db.Reader(), max: max}
}

// sessionHash is what the database keeps of a session id.
func sessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// Start keeps the session id until expires, after clearing the sessions
// expired by now and, when the table is full, the oldest.
func (s *Sessions) Start(ctx context.Context, id string, now, expires time.Time) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE expires_ms <= ?`, now.UnixMilli()); err != nil {
		return fmt.Errorf("start session: clear the expired: %w", err)
	}
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return fmt.Errorf("start session: count: %w", err)
	}
	if over := n - s.max + 1; over > 0 {
		if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE hash IN
  (SELECT hash FROM sessions ORDER BY expires_ms LIMIT ?)`, over); err != nil {
			return fmt.Errorf("start session: end the oldest: %w", err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO sessions (hash, expires_ms) VALUES (?, ?)`,
		sessionHash(id), expires.UnixMilli()); err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	return nil
}

// Live says whether the session id was started and has neither ended nor
// expired by now.
func (s *Sessions) Live(ctx context.Context, id string, now time.Time) (bool, error) {
	var exp int64
	err := s.r.QueryRowContext(ctx, `SELECT expires_ms FROM sessions WHERE hash = ?`, sessionHash(id)).Scan(&exp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read session: %w", err)
	}
	return now.UnixMilli() < exp, nil
}

// End ends the session id on every replica.
func (s *Sessions) End(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, sessionHash(id)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
