package quota_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

// The embedded limiter lives in the database the store opens: its tables
// and its ledger come from that one open, and a call it admits is in the
// ledger before Take returns.
func ExampleNewSQLite() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	db, err := wiring.Open(ctx, filepath.Join(dir, "ingest.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	led, err := db.QuotaLedger(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	lim, err := quota.NewSQLite(wiring.Tables(db.Tables()), "my-key", costs.Default(), led, quota.NoUpstreamClock, clock.System, quota.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := lim.Take(ctx, ingest.Caller{}, ingest.OpVideosList)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls, _ := db.Calls(ctx, "my-key", time.Now().Add(-time.Hour))
	fmt.Println("allowed:", d.Allowed, "units:", d.Units(ingest.DefaultPool), "ledger rows:", len(calls))
	// Output: allowed: true units: 1 ledger rows: 1
}

// The shared limiter on Redis takes the same ledger, so that a Redis that
// loses its data is refilled from it, and the upstream's clock, which
// guards the window's day. It needs a server, so this example is compiled
// and not run.
func ExampleNewRedis() {
	ctx := context.Background()
	client, err := quota.NewClient("redis://127.0.0.1:6379/0", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	db, err := wiring.Open(ctx, "ingest.db")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	led, err := db.QuotaLedger(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	lim, err := quota.NewRedis(client, "my-key", costs.Default(), led, quota.NoUpstreamClock, clock.System, quota.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := lim.Take(ctx, ingest.Caller{}, ingest.OpVideosList)
	fmt.Println(d.Allowed, err)
}
