package ingest

import (
	"errors"
	"fmt"
	"time"
)

// Upstream error kinds, shared by the client that detects them and the jobs
// that act on them. Match them with errors.Is.
var (
	// ErrBadKey: the upstream rejects YOUTUBE_API_KEY or the key may not call
	// this API. Retrying cannot help.
	ErrBadKey = errors.New("the upstream rejected YOUTUBE_API_KEY")
	// ErrNoChart: the upstream has no most-popular chart for a region.
	ErrNoChart = errors.New("no most-popular chart for this region")
	// ErrInvalidPageToken: the upstream refused a page token.
	ErrInvalidPageToken = errors.New("invalid page token")
	// ErrQuotaExhausted: the upstream says its daily quota is spent.
	ErrQuotaExhausted = errors.New("upstream quota exhausted")
	// ErrUnavailable: the shared limiter (or its lease) cannot be reached.
	ErrUnavailable = errors.New("unavailable")
	// ErrClockSkew: the limiter refused because its clock and the
	// upstream's (its Date header) disagree; the error says which is wrong.
	ErrClockSkew = fmt.Errorf("%w: the limiter's clock disagrees with the upstream's", ErrUnavailable)
	// ErrDiskFull: the store has no room for what the next call brings.
	// Every other chart of a run would meet the same full disk, so a run
	// stops at the first, before a unit is spent on a page it cannot keep.
	ErrDiskFull = errors.New("the disk is full")
	// ErrDamaged: the store's file is damaged; every chart would meet it.
	ErrDamaged = errors.New("the database is damaged")
)

// Blamed is what a chart's failure err blames, as a message names it: "a
// database" when the store has no room or cannot be read, else "an
// upstream".
func Blamed(err error) string {
	if errors.Is(err, ErrDiskFull) || errors.Is(err, ErrDamaged) {
		return "a database"
	}
	return "an upstream"
}

// Backoff is a daemon's wait on a chart source that fails every chart, as
// the store keeps it for every process on the database: none starts a
// chart before Until, and a chart that succeeds anywhere ends it. The zero
// Backoff is none.
type Backoff struct {
	Until  time.Time
	Wait   time.Duration // the wait that ends at Until: the next failure doubles it
	InARow int           // chart passes failed in a row when it started or last grew
	Blamed string        // what Blamed said of the failure
	Cause  string        // the failure's text, as the warning said it
}

// QuotaExhaustedError says which quota the upstream reported spent and when
// it resets (the next midnight America/Los_Angeles).
type QuotaExhaustedError struct {
	Op string
	// PerMethod is true when a per-method bucket is spent (a 429 whose
	// message says "per day"), false for the project's daily quota.
	PerMethod bool
	Reset     time.Time
	Message   string
}

func (e *QuotaExhaustedError) Error() string {
	return fmt.Sprintf("%s: upstream quota exhausted until %s: %s", e.Op,
		e.Reset.UTC().Format(time.RFC3339), e.Message)
}

func (e *QuotaExhaustedError) Unwrap() error { return ErrQuotaExhausted }

// ConfigError is a configuration a host refuses before anything is spent
// or written; a command exits 2 on it (docs/contract.md). Every other
// error is a runtime failure. The builder (wiring) and the rules of
// custody both refuse so, and cmd reads it from either.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ConfigErrorf is a ConfigError of a formatted error.
func ConfigErrorf(format string, args ...any) error {
	return &ConfigError{fmt.Errorf(format, args...)}
}
