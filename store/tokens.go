package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

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
func (db *DB) AddToken(ctx context.Context, name, plan string, at time.Time) (string, error) {
	b := make([]byte, 32)
	rand.Read(b)
	tok := tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	_, err := db.w.ExecContext(ctx, `INSERT INTO api_tokens (name, hash, plan, created_ms) VALUES (?, ?, ?, ?)`,
		name, TokenHash(tok), plan, msOf(at))
	if duplicate(err) {
		return "", fmt.Errorf("add token %s: %w", name, ErrTokenExists)
	}
	if err != nil {
		return "", fmt.Errorf("add token %s: %w", name, err)
	}
	return tok, nil
}

// RevokeToken deletes the token called name: its next request is refused.
func (db *DB) RevokeToken(ctx context.Context, name string) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM api_tokens WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("revoke token %s: %w", name, ErrTokenMissing)
	}
	return nil
}

// Tokens lists every token by name.
func (db *DB) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT name, plan, created_ms, last_used_ms FROM api_tokens ORDER BY name`)
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
		t.Created, t.LastUsed = time.UnixMilli(created).UTC(), timeOf(used)
		out = append(out, t)
	}
	return out, rows.Err()
}

// TokenPlan returns the plan of the token whose hash is hash; ok is false
// when there is none (never made, or revoked).
func (db *DB) TokenPlan(ctx context.Context, hash string) (plan string, ok bool, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT plan FROM api_tokens WHERE hash = ?`, hash).Scan(&plan)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up token: %w", err)
	}
	return plan, true, nil
}

// TokenUsed records that the token whose hash is hash was used at at.
func (db *DB) TokenUsed(ctx context.Context, hash string, at time.Time) error {
	_, err := db.w.ExecContext(ctx, db.q.touchToken, msOf(at), hash)
	if err != nil {
		return fmt.Errorf("record token use: %w", err)
	}
	return nil
}

// touchTokenSQL is SQLite's text; pg_sql.go has PostgreSQL's.
const touchTokenSQL = `UPDATE api_tokens SET last_used_ms = max(coalesce(last_used_ms, 0), ?) WHERE hash = ?`
