package fetch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/fetch"
)

// TestDateHeader: every response's Date header reaches OnDate, and
// UpstreamTime reads the upstream's clock with a request that carries no
// key, charged nothing; both follow the upstream's own clock, not this
// host's.
func TestDateHeader(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var dates []time.Time
	e := newEnv(t, func(o *fetch.Options) {
		o.OnDate = func(_ context.Context, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			dates = append(dates, at)
		}
	})
	ahead := 25 * time.Hour
	e.fake.SetClock(func() time.Time { return time.Now().Add(ahead) })
	if _, err := e.client.Categories(context.Background(), e.gate.Gate, "US", ""); err != nil {
		t.Fatal(err)
	}
	at, err := e.client.UpstreamTime(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	near := func(got time.Time) bool {
		d := got.Sub(time.Now().Add(ahead))
		return d > -5*time.Second && d < 5*time.Second
	}
	switch {
	case len(dates) != 1 || !near(dates[0]):
		t.Errorf("OnDate got %v for one call; want one time about 25 h ahead", dates)
	case !near(at):
		t.Errorf("UpstreamTime = %s; want about 25 h ahead of now", at)
	case e.fake.Charged(key) != 1 || e.fake.Keyless() != 1:
		t.Errorf("charged %d, keyless requests %d; want 1 (the call) and 1 (the time, with no key)", e.fake.Charged(key), e.fake.Keyless())
	}
}
