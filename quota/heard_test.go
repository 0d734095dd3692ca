package quota_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/quota"
)

// notebook keeps notes unless told to fail, and refuses a write whose
// context has ended, as a database does.
type notebook struct {
	mu    sync.Mutex
	notes map[string]string
	fail  error
}

func (n *notebook) Note(ctx context.Context, name, value string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if n.fail != nil {
		return n.fail
	}
	n.notes[name] = value
	return nil
}

func (n *notebook) Noted(_ context.Context, name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.notes[name], nil
}

// The upstream's time in a response is kept in the ledger even when the
// call that brought it has ended (its reading is as good), and a ledger
// that would not keep it is a warning, never the call's failure.
func TestHeardKeepsEachResponsesTime(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	uptime := func() (string, time.Duration, bool) { return "boot-1", time.Hour, true }
	for _, c := range []struct {
		name string
		fail error
		warn string
	}{
		{"kept", nil, ""},
		{"refused", errors.New("database is locked"), `level=WARN msg="keep the upstream's time in the ledger" err="keep the upstream's time: database is locked"`},
	} {
		notes := &notebook{notes: map[string]string{}, fail: c.fail}
		up := quota.NewUpstreamClock(clock.Func(func() time.Time { return now }), quota.UpstreamOptions{Notes: notes, Uptime: uptime})
		var logs bytes.Buffer
		heard := up.Heard(slog.New(slog.NewTextHandler(&logs, nil)))
		ended, end := context.WithCancel(context.Background())
		end()
		heard(ended, now.Add(3*time.Second))
		if c.warn == "" {
			seen, ok, err := up.Last(context.Background())
			if err != nil || !ok || !seen.At.Equal(now.Add(3*time.Second)) || notes.notes["upstream-clock"] == "" {
				t.Errorf("%s: the ledger holds %+v (ok %v, err %v), notes %v; want the response's time", c.name, seen, ok, err, notes.notes)
			}
		}
		if got := strings.TrimSpace(logs.String()); (c.warn == "") != (got == "") || !strings.Contains(got, c.warn) {
			t.Errorf("%s: said %q, want %q", c.name, got, c.warn)
		}
	}
}
