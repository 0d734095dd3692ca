package quota_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
)

type checked struct{ err error }

func (c checked) CheckConfig(context.Context) error { return c.err }

// TestAgreeBeforeSpending: a limiter holding other pools than the costs
// file is a configuration error naming --costs; one that cannot be asked
// is a warning and no error (each call meets the check later); one that
// agrees is nothing. Created asks only a limiter on Redis.
func TestAgreeBeforeSpending(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name           string
		err            error
		config, warned bool
	}{
		{name: "agrees"},
		{name: "disagrees", err: &quota.ConfigError{QuotaKey: "k", Pool: "default", Field: "limit", Limiter: "5", CostsValue: "10"}, config: true},
		{name: "cannot be asked", err: errors.New("connection refused"), warned: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			err := quota.Agree(ctx, checked{c.err}, slog.New(slog.NewTextHandler(&logs, nil)))
			var ce *ingest.ConfigError
			if got := errors.As(err, &ce); got != c.config || (got && !strings.Contains(err.Error(), "--costs")) {
				t.Errorf("err %v: a configuration error naming --costs %v, want %v", err, got, c.config)
			}
			if c.config == false && err != nil {
				t.Errorf("err %v, want none", err)
			}
			if got := strings.Contains(logs.String(), "level=WARN"); got != c.warned {
				t.Errorf("warned %v, want %v: %s", got, c.warned, logs.String())
			}
		})
	}
	if err := quota.Created(ctx, checked{}); err != nil {
		t.Errorf("Created of a limiter not on Redis: %v", err)
	}
}

// TestBeforeCreatingADatabase: on a host with no database yet, a limiter
// holding other pools than the costs file is a configuration error naming
// --costs, before anything is created; one that cannot be asked is left
// to the checks once the database is open, said nothing of here.
func TestBeforeCreatingADatabase(t *testing.T) {
	ctx := context.Background()
	disagrees := &quota.ConfigError{QuotaKey: "k", Pool: "default", Field: "limit", Limiter: "5", CostsValue: "10"}
	err := quota.BeforeCreating(ctx, checked{disagrees})
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "--costs: ") || !errors.Is(err, disagrees) {
		t.Errorf("a limiter that disagrees: %v, want a configuration error naming --costs", err)
	}
	for _, c := range []error{nil, errors.New("connection refused")} {
		if err := quota.BeforeCreating(ctx, checked{c}); err != nil {
			t.Errorf("a limiter whose check says %v: %v, want nothing before the database", c, err)
		}
	}
}
