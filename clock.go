package ingest

import "time"

// Clock tells the time: the one clock a host's parts read, built once
// where a command is assembled (package clock: the host's, a test's that
// stands still until moved, a rehearsal's). A part whose promise rests on
// the time (the limiter's window, the pacer, what the jobs stamp, the
// web's throttle, meter and kept pages) takes one in its constructor, so
// that no part runs on a clock its neighbours do not (docs/ARCHITECTURE.md).
type Clock interface {
	Now() time.Time
}

// AheadGuard is how far ahead of a host's clock a chart's recorded start
// may be and still count as a pass: hosts' clocks differ by seconds, a
// clock stepped ahead by minutes. A start stamped further ahead was made
// by a clock stepped ahead; the schedule takes it as no run of a slot, and
// the pacer as no pass, so that a chart runs at its slots rather than
// waiting out the step. The chart's lease alone keeps two hosts from
// running it at once.
const AheadGuard = time.Minute
