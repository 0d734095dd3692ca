package throttle

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/ratelimit"
)

type tokenList []clients.Token

func (l tokenList) Tokens(context.Context) ([]clients.Token, error) { return l, nil }

// Only the token whose plan the file lacks is warned of.
func TestWarnUnusableTokens(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	WarnUnusableTokens(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)),
		tokenList{{Name: "ok", Plan: "standard"}, {Name: "gone", Plan: "gold"}}, ratelimit.DefaultAPIPlans())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "token=gone") || !strings.Contains(lines[0], "plan=gold") {
		t.Errorf("log:\n%s", buf.String())
	}
}
