package ingest

import (
	"time"
	_ "time/tzdata" // the reset zone must load on minimal images
)

// upstreamZone is where the upstream's day starts: its quota resets at
// midnight America/Los_Angeles.
var upstreamZone = mustZone("America/Los_Angeles")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// UpstreamReset returns the next midnight America/Los_Angeles after t.
func UpstreamReset(t time.Time) time.Time {
	l := t.In(upstreamZone)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, upstreamZone)
}
