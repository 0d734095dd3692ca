package quota_test

// A library user's limiter: built from the documented constructors, it
// refuses each required argument left out, naming it.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

func TestRequiredArgumentsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	whole, err := wiring.On(db, "host:/ledger.db").QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := quota.NewClient("redis://127.0.0.1:1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var clk clock.Clock = clock.System // each build's
	backends := map[string]func(key string, l quota.Ledger, up *quota.UpstreamClock) error{
		"redis": func(key string, l quota.Ledger, up *quota.UpstreamClock) error {
			_, err := quota.NewRedis(c, key, costs.Default(), l, up, clk, quota.Options{})
			return err
		},
		"sqlite": func(key string, l quota.Ledger, up *quota.UpstreamClock) error {
			_, err := quota.NewSQLite(wiring.Tables(ledger.New(db).Tables()), key, costs.Default(), l, up, clk, quota.Options{})
			return err
		},
		"postgres": func(key string, l quota.Ledger, up *quota.UpstreamClock) error {
			_, err := quota.NewPostgres(wiring.Tables(ledger.New(db).Tables()), key, costs.Default(), l, up, clk, quota.Options{})
			return err
		},
	}
	left := map[string]func(*quota.Ledger){
		"ID":       func(l *quota.Ledger) { l.ID = "" },
		"Where":    func(l *quota.Ledger) { l.Where = "" },
		"Record":   func(l *quota.Ledger) { l.Record = nil },
		"Recall":   func(l *quota.Ledger) { l.Recall = nil },
		"Grant":    func(l *quota.Ledger) { l.Grant = nil },
		"Notes":    func(l *quota.Ledger) { l.Notes = nil },
		"Unknowns": func(l *quota.Ledger) { l.Unknowns = nil },
	}
	for name, build := range backends {
		if err := build("q", whole, quota.NoUpstreamClock); err != nil {
			t.Fatalf("%s with every argument: %v", name, err)
		}
		for field, drop := range left {
			l := whole
			drop(&l)
			err := build("q", l, quota.NoUpstreamClock)
			if err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("%s without the ledger's %s: %v, want an error naming it", name, field, err)
			}
		}
		clk = nil
		if err := build("q", whole, quota.NoUpstreamClock); err == nil || !strings.Contains(err.Error(), "clock is required") {
			t.Errorf("%s without the house's clock: %v, want an error naming it", name, err)
		}
		clk = clock.System
		if err := build("q", whole, nil); err == nil || !strings.Contains(err.Error(), "upstream's clock") {
			t.Errorf("%s without the upstream's clock: %v, want an error naming it", name, err)
		}
		if err := build("", whole, quota.NoUpstreamClock); err == nil || !strings.Contains(err.Error(), "quota key") {
			t.Errorf("%s without a quota key: %v, want an error naming it", name, err)
		}
	}
	if _, err := quota.NewSQLite(wiring.Tables(ledger.New(db).Tables()), "q", nil, whole, quota.NoUpstreamClock, clock.System, quota.Options{}); err == nil || !strings.Contains(err.Error(), "costs") {
		t.Errorf("sqlite without the costs: %v, want an error naming them", err)
	}
	if _, err := quota.NewRedis(nil, "q", costs.Default(), whole, quota.NoUpstreamClock, clock.System, quota.Options{}); err == nil || !strings.Contains(err.Error(), "client") {
		t.Errorf("redis without a client: %v, want an error naming it", err)
	}
	// NoLedger reads and configures; it admits nothing.
	r, err := quota.NewRedis(c, "q", costs.Default(), quota.NoLedger(), quota.NoUpstreamClock, clock.System, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err == nil || d.Allowed {
		t.Errorf("a limiter without a ledger took a call: %+v, %v", d, err)
	}
	if _, err := quota.NewSQLite(wiring.Tables(ledger.New(db).Tables()), "q", costs.Default(), quota.NoLedger(), quota.NoUpstreamClock, clock.System, quota.Options{}); err == nil {
		t.Error("an embedded limiter built with NoLedger")
	}
}

// TestRequiredTablesRefused: an embedded limiter built without one of its
// tables' roles is refused, naming it; with the store's, it decides.
func TestRequiredTablesRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := wiring.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	led, err := db.QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	whole := wiring.Tables(db.Tables())
	left := map[string]func(*quota.Tables){
		"Turns":  func(t *quota.Tables) { t.Turns = nil },
		"Clocks": func(t *quota.Tables) { t.Clocks = nil },
		"Log":    func(t *quota.Tables) { t.Log = nil },
		"Pools":  func(t *quota.Tables) { t.Pools = nil },
		"Leases": func(t *quota.Tables) { t.Leases = nil },
	}
	for role, drop := range left {
		tables := whole
		drop(&tables)
		if _, err := quota.NewSQLite(tables, "q", costs.Default(), led, quota.NoUpstreamClock, clock.System, quota.Options{}); err == nil || !strings.Contains(err.Error(), role) {
			t.Errorf("sqlite without the tables' %s: %v, want an error naming it", role, err)
		}
		if _, err := quota.NewPostgres(tables, "q", costs.Default(), led, quota.NoUpstreamClock, clock.System, quota.Options{}); err == nil || !strings.Contains(err.Error(), role) {
			t.Errorf("postgres without the tables' %s: %v, want an error naming it", role, err)
		}
	}
	// The documented way: the database opens with its limiter, built from
	// nothing but the required arguments.
	l, err := db.Limiter(ctx, "q", costs.Default(), quota.NoUpstreamClock, clock.System, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	if rec, err := db.Recall(ctx, "q", time.Now().Add(-time.Hour), time.Now()); err != nil || len(rec.Calls) != 1 {
		t.Fatalf("the ledger after one call: %+v, %v; want the call, recorded by the limiter itself", rec, err)
	}
}
