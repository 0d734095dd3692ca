// Package clients is what the database keeps of the API's clients: their
// tokens (only each one's hash), the readers' site's sign-ins (only each
// session id's hash, so that every replica honours them) and, on PostgreSQL, the API limiter's
// counts shared by every host (package ratelimit holds the algorithm). It
// owns no connection and no migration: store.Open opens the database and
// builds its tables, and the wiring hands this package what store opened.
// Each statement that differs between the databases is written here
// twice, SQLite's beside PostgreSQL's.
package clients

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Database is the database as store opened it (*store.DB).
type Database interface {
	Writer() *sql.DB
	Reader() *sql.DB
	Postgres() bool
}

// Clients are the API's clients on one database.
type Clients struct {
	w, r *sql.DB
	pg   bool
}

// New returns the clients kept in db.
func New(db Database) *Clients { return &Clients{db.Writer(), db.Reader(), db.Postgres()} }

// tokenPrefix starts every token, so that one found in a log or a
// repository is recognised for what it is.
const tokenPrefix = "ingest_"

// Errors of the token table.
var (
	ErrTokenExists  = errors.New("a token of that name exists")
	ErrTokenMissing = errors.New("no token of that name")
)

// Token is one API token as the database keeps it: never the token.
type Token struct {
	Name     string    `json:"name"`
	Plan     string    `json:"plan"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// TokenHash is what the database keeps of a token, and what names its
// client to the limiter: a token is random, so an unsalted hash does not
// reveal it.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// AddToken makes a token called name on plan and returns it; only its hash
// is kept, so this is the one time it can be read.
func (c *Clients) AddToken(ctx context.Context, name, plan string, at time.Time) (string, error) {
	b := make([]byte, 32)
	rand.Read(b)
	tok := tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	_, err := c.w.ExecContext(ctx, `INSERT INTO api_tokens (name, hash, plan, created_ms) VALUES (?, ?, ?, ?)`,
		name, TokenHash(tok), plan, at.UnixMilli())
	if duplicate(err) {
		return "", fmt.Errorf("add token %s: %w", name, ErrTokenExists)
	}
	if err != nil {
		return "", fmt.Errorf("add token %s: %w", name, err)
	}
	return tok, nil
}

// RevokeToken deletes the token called name: its next request is refused.
func (c *Clients) RevokeToken(ctx context.Context, name string) error {
	res, err := c.w.ExecContext(ctx, `DELETE FROM api_tokens WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("revoke token %s: %w", name, ErrTokenMissing)
	}
	return nil
}

// Tokens lists every token by name.
func (c *Clients) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := c.r.QueryContext(ctx, `SELECT name, plan, created_ms, last_used_ms FROM api_tokens ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		var created int64
		var used sql.NullInt64
		if err := rows.Scan(&t.Name, &t.Plan, &created, &used); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		t.Created, t.LastUsed = time.UnixMilli(created).UTC(), lastUsed(used)
		out = append(out, t)
	}
	return out, rows.Err()
}

// TokenPlan returns the plan of the token whose hash is hash; ok is false
// when there is none (never made, or revoked).
func (c *Clients) TokenPlan(ctx context.Context, hash string) (plan string, ok bool, err error) {
	err = c.r.QueryRowContext(ctx, `SELECT plan FROM api_tokens WHERE hash = ?`, hash).Scan(&plan)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up token: %w", err)
	}
	return plan, true, nil
}

// TokenByHash returns the token whose hash is hash, its name and plan;
// ok is false when there is none (never made, or revoked).
func (c *Clients) TokenByHash(ctx context.Context, hash string) (t Token, ok bool, err error) {
	var created int64
	var used sql.NullInt64
	err = c.r.QueryRowContext(ctx, `SELECT name, plan, created_ms, last_used_ms FROM api_tokens WHERE hash = ?`, hash).
		Scan(&t.Name, &t.Plan, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, fmt.Errorf("look up token: %w", err)
	}
	t.Created, t.LastUsed = time.UnixMilli(created).UTC(), lastUsed(used)
	return t, true, nil
}

// TokenUsed records that the token whose hash is hash was used at at.
func (c *Clients) TokenUsed(ctx context.Context, hash string, at time.Time) error {
	q := `UPDATE api_tokens SET last_used_ms = max(coalesce(last_used_ms, 0), ?1) WHERE hash = ?2`
	if c.pg {
		q = `UPDATE api_tokens SET last_used_ms = greatest(coalesce(last_used_ms, 0), ?1) WHERE hash = ?2`
	}
	_, err := c.w.ExecContext(ctx, q, at.UnixMilli(), hash)
	if err != nil {
		return fmt.Errorf("record token use: %w", err)
	}
	return nil
}

func lastUsed(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// duplicate says whether err is a unique key's violation, on either
// database.
func duplicate(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE")
}
