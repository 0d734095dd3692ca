package report

import (
	"fmt"
	"io"
	"time"
)

// Clock is how far the upstream's clock was ahead of this ledger's host
// (negative: behind) when its Date header was last read: the upstream's
// day is the quota's, and a host whose clock is off by more than the
// limiter's guard decides nothing.
type Clock struct {
	Skew time.Duration
	Seen time.Time // the upstream's time of that reading
}

// ClockJSON is the clock in `report --json`: upstream_clock, null when
// this ledger has never read the upstream's time.
type ClockJSON struct {
	SkewSeconds float64 `json:"skew_seconds"` // the upstream's clock minus this host's, whole seconds
	SeenAt      string  `json:"seen_at"`
}

func (r *Report) clockJSON() *ClockJSON {
	if r.Clock == nil {
		return nil
	}
	return &ClockJSON{SkewSeconds: r.Clock.Skew.Round(time.Second).Seconds(), SeenAt: r.Clock.Seen.UTC().Format(time.RFC3339)}
}

// textClock is the report's line on the clocks.
func (r *Report) textClock(out io.Writer) {
	if r.Clock == nil {
		fmt.Fprintln(out, "Upstream clock: not read yet (the first call, or `ingest check`, reads its Date header)")
		return
	}
	fmt.Fprintf(out, "Upstream clock: %s (its Date header at %s)\n", SkewText(r.Clock.Skew), r.Clock.Seen.UTC().Format("2006-01-02 15:04:05 MST"))
}

// SkewText says a skew of this host's clock against the upstream's.
func SkewText(skew time.Duration) string {
	d := skew.Round(time.Second)
	switch {
	case d > -2*time.Second && d < 2*time.Second:
		return "this host's clock agrees with the upstream's to the second the Date header has"
	case d > 0:
		return fmt.Sprintf("this host's clock is %s behind the upstream's", d)
	}
	return fmt.Sprintf("this host's clock is %s ahead of the upstream's", -d)
}
