package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/quota"
)

// Skew is nothing before a reading, then the upstream's clock minus this
// host's at the reading.
func TestUpstreamClockSkew(t *testing.T) {
	t.Parallel()
	local := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	up := quota.NewUpstreamClock(clocktest.NewFake(local), quota.UpstreamOptions{
		Uptime: func() (string, time.Duration, bool) { return "b", time.Hour, true }})
	ctx := context.Background()
	if _, ok, err := up.Skew(ctx); ok || err != nil {
		t.Fatalf("before a reading: ok %v, err %v", ok, err)
	}
	if err := up.Saw(ctx, local.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if skew, ok, err := up.Skew(ctx); !ok || err != nil || skew != 3*time.Second {
		t.Errorf("skew %s, ok %v, err %v; want 3s", skew, ok, err)
	}
}
