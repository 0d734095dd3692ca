package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/jobs"
)

// A read of the region catalogue that meets the upstream's exhausted
// quota blocks its pools for every worker until the reset, as a pass's
// call does: the next pass calls the upstream no more, where it once
// called it again and was refused.
func TestACatalogueReadTheUpstreamRefusedBlocksEveryone(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	r.fake.ExhaustQuota(fakeyt.QuotaExceeded)
	var logs bytes.Buffer
	cat := jobs.Catalogue{Store: r.db.RegionCatalogue(), List: r.client.Regions, Clock: clock.System,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Limiter: r.limiter, Costs: r.costs}
	ctx := context.Background()
	if _, ok := cat.Read(ctx, jobs.Gate(r.limiter, "q", "")); ok {
		t.Fatal("the catalogue was read from an upstream whose quota is spent")
	}
	if r.fake.Requests() != 1 {
		t.Fatalf("%d upstream requests for the catalogue, want 1", r.fake.Requests())
	}
	reset := ingest.UpstreamReset(time.Now())
	if !strings.Contains(logs.String(), "blocked until "+reset.UTC().Format(time.RFC3339)) {
		t.Errorf("the log does not say the pool is blocked until the upstream's reset (%s):\n%s", reset.UTC().Format(time.RFC3339), logs.String())
	}
	res := r.pass("FR").Run(ctx)
	if res.Status != ingest.StatusStopped || !res.RetryAt.Equal(reset) || r.fake.Requests() != 1 {
		t.Fatalf("the next pass: %s until %v (%v) with %d more upstream requests, want stopped until %v with none",
			res.Status, res.RetryAt, res.Err, r.fake.Requests()-1, reset)
	}
}
