package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// faultFlags are the fake's faults as flags: each names one of the Fake's
// hooks, set once at start.
type faultFlags struct {
	quota      string
	buckets    string
	badKey     string
	fail       int
	failStatus int
	malformed  int
}

var quotaShapes = map[string]fakeyt.QuotaShape{
	"exceeded": fakeyt.QuotaExceeded, "daily": fakeyt.DailyLimitExceeded,
	"search": fakeyt.SearchPerDay, "stats": fakeyt.StatsPerDay,
}

var keyFaults = map[string]fakeyt.KeyFault{
	"invalid": fakeyt.KeyInvalid, "legacy": fakeyt.KeyInvalidLegacy,
	"blocked": fakeyt.KeyBlocked, "not-configured": fakeyt.KeyNotConfigured,
}

func (f *faultFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.quota, "quota-refusal", "", "refuse every call as a spent quota: "+names(quotaShapes)+
		" (exceeded and daily: every method; search, stats: that bucket's methods)")
	fs.StringVar(&f.buckets, "bucket-quota", "", "POOL=UNITS,...: refuse a pool's calls once UNITS are charged in it, as the upstream does when its day is spent")
	fs.StringVar(&f.badKey, "bad-key", "", "reject every key: "+names(keyFaults))
	fs.IntVar(&f.fail, "fail", 0, "fail the next N calls with --fail-status")
	fs.IntVar(&f.failStatus, "fail-status", 500, "the status of --fail: 500 or 503 (backendError), 429 (a per-minute rate limit)")
	fs.IntVar(&f.malformed, "malformed", 0, "answer the next N successful calls with a truncated JSON body")
}

// apply sets the faults on fake; a value it does not know is an error
// naming the flag.
func (f *faultFlags) apply(fake *fakeyt.Fake) error {
	if f.quota != "" {
		shape, ok := quotaShapes[f.quota]
		if !ok {
			return fmt.Errorf("--quota-refusal: %q is not one of %s", f.quota, names(quotaShapes))
		}
		fake.ExhaustQuota(shape)
	}
	if f.badKey != "" {
		fault, ok := keyFaults[f.badKey]
		if !ok {
			return fmt.Errorf("--bad-key: %q is not one of %s", f.badKey, names(keyFaults))
		}
		fake.BadKey(fault)
	}
	if err := f.applyBuckets(fake); err != nil {
		return err
	}
	if f.fail < 0 || f.malformed < 0 {
		return fmt.Errorf("--fail and --malformed: must be >= 0")
	}
	if f.fail > 0 {
		if f.failStatus != 429 && (f.failStatus < 500 || f.failStatus > 599) {
			return fmt.Errorf("--fail-status: %d is not 429 or 5xx", f.failStatus)
		}
		fake.FailNext(f.fail, f.failStatus)
	}
	if f.malformed > 0 {
		fake.MalformNext(f.malformed)
	}
	return nil
}

func (f *faultFlags) applyBuckets(fake *fakeyt.Fake) error {
	if f.buckets == "" {
		return nil
	}
	for _, kv := range strings.Split(f.buckets, ",") {
		pool, n, ok := strings.Cut(kv, "=")
		units, err := strconv.ParseInt(n, 10, 64)
		if _, known := fakeyt.DailyLimits[pool]; !ok || !known || err != nil || units <= 0 {
			return fmt.Errorf("--bucket-quota: %q is not POOL=UNITS with POOL one of %s and UNITS > 0", kv, names(fakeyt.DailyLimits))
		}
		fake.SetBucketQuota(pool, units)
	}
	return nil
}

// names lists a map's keys, sorted, for a flag's help and errors.
func names[V any](m map[string]V) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
