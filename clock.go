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
