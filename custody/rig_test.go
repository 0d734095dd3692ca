package custody

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// The rules are tested here on their own: a host is a Rules over SQLite
// files in the test's directory, opened as the builder opens them, each
// with its ledger, and a clock the test holds.

// key is the quota key every test spends on.
const key = "k1"

// start is when every test's clock starts.
var start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// open is the builder's open for the tests: a database at path with its
// ledger, closed when the test ends if the rule leaves it open.
func open(t *testing.T) Opener {
	return func(ctx context.Context, path string, create bool) (*Database, error) {
		o := store.OpenExisting
		if create {
			o = store.Open
		}
		db, err := o(ctx, path)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { db.Close() })
		return &Database{Ledger: ledger.New(db), Runs: db, Path: db.Path(), Close: db.Close}, nil
	}
}

// redisAt is the tests' reading of a Redis URL, as the builder's: the
// host and port its client dials, no password.
func redisAt(raw string) Holder {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return InRedis(u.Host)
}

// host is a host's rules on the database at dsn, on the Redis at redisURL
// ("" for the embedded limiter).
func host(t *testing.T, dsn, redisURL string, c ingest.Clock) *Rules {
	here := Embedded
	if redisURL != "" {
		here = redisAt(redisURL)
	}
	return &Rules{DSN: dsn, RedisURL: redisURL, Here: here, RedisAt: redisAt, Span: 24 * time.Hour, Clock: c,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Open: open(t)}
}

// database is a new database's file and its ledger, open.
func database(t *testing.T) (string, *Database) {
	t.Helper()
	path := storetest.Path(t)
	db, err := open(t)(context.Background(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	return path, db
}

// call is a call of key at, of units in pool "units".
func call(id string, at time.Time, units int64) ingest.Call {
	return ingest.Call{QuotaKey: key, ID: id, At: at, Op: ingest.OpVideosList, Region: "US",
		Charges: []ingest.Charge{{Pool: "units", Units: units}}}
}

// record records calls in led.
func record(t *testing.T, led *ledger.Ledger, calls ...ingest.Call) {
	t.Helper()
	for _, c := range calls {
		if err := led.RecordCall(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
}

// ids are the calls of key led holds within a day of now.
func ids(t *testing.T, led *ledger.Ledger, now time.Time) []string {
	t.Helper()
	rec, err := led.Recall(context.Background(), key, now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range rec.Calls {
		out = append(out, c.ID)
	}
	return out
}

// refused says whether err is a configuration error (exit 2) holding a
// *E, and gives it.
func refused[E error](t *testing.T, err error) E {
	t.Helper()
	var target E
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a configuration error", err)
	}
	if !errors.As(err, &target) {
		t.Fatalf("got %v, want a %T", err, target)
	}
	return target
}
