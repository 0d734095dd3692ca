package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestCheckSaysTheLimiterRunsWithoutTheUpstreamClock: on a host with Redis
// and no database yet, the limiter is built without a ledger and the
// upstream's clock (quota.NoLedger, quota.NoUpstreamClock), and check's
// limiter line says so; once a run created the database, it has both.
func TestCheckSaysTheLimiterRunsWithoutTheUpstreamClock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "quota", "apply", h.newFlag())
	limiterLine := regexp.MustCompile(`(?m)^\S+ +limiter +(.*)$`)
	res := h.mustRun(0, "check", "--offline")
	line := limiterLine.FindStringSubmatch(res.stdout)
	if line == nil || !strings.Contains(line[1], "without the upstream's clock") {
		t.Fatalf("check with Redis and no database: want the limiter line to say it runs without the upstream's clock, got %s", res)
	}
	h.mustRun(0, "run", "--once", "--regions", "US")
	res = h.mustRun(0, "check", "--offline")
	if line := limiterLine.FindStringSubmatch(res.stdout); line == nil || strings.Contains(line[1], "without") {
		t.Fatalf("check after the first run: want the limiter line without the choice, got %s", res)
	}
}
