package clients

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTokens adds, looks up, uses, lists and revokes a token, and checks
// that the database never holds the token itself.
func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db both) {
		at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		tok, err := db.AddToken(ctx, "acme", "standard", at)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok, tokenPrefix) || len(tok) < 40 {
			t.Fatalf("token %q: want %s and 32 random bytes", tok, tokenPrefix)
		}
		if _, err := db.AddToken(ctx, "acme", "standard", at); !errors.Is(err, ErrTokenExists) {
			t.Fatalf("second add: got %v, want ErrTokenExists", err)
		}
		var n int
		if err := db.Reader().QueryRow(`SELECT count(*) FROM api_tokens WHERE hash = ? OR name = ? OR plan = ?`, tok, tok, tok).Scan(&n); err != nil || n != 0 {
			t.Fatalf("the token itself is stored (%d rows, %v)", n, err)
		}
		plan, ok, err := db.TokenPlan(ctx, TokenHash(tok))
		if err != nil || !ok || plan != "standard" {
			t.Fatalf("TokenPlan: got %q %v %v, want standard", plan, ok, err)
		}
		if err := db.TokenUsed(ctx, TokenHash(tok), at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := db.Tokens(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("Tokens: got %v %v", list, err)
		}
		want := Token{Name: "acme", Plan: "standard", Created: at, LastUsed: at.Add(time.Hour)}
		if list[0] != want {
			t.Errorf("Tokens: got %+v, want %+v", list[0], want)
		}
		if err := db.RevokeToken(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := db.TokenPlan(ctx, TokenHash(tok)); ok {
			t.Error("a revoked token still has a plan")
		}
		if err := db.RevokeToken(ctx, "acme"); !errors.Is(err, ErrTokenMissing) {
			t.Errorf("second revoke: got %v, want ErrTokenMissing", err)
		}
	})
}
