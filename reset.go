package ingest

import (
	"time"
	_ "time/tzdata" // the reset zone must load on minimal images
)

// UpstreamZone is where the upstream's day starts: its quota resets at
// midnight America/Los_Angeles.
var UpstreamZone = mustZone("America/Los_Angeles")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// UpstreamReset returns the next midnight America/Los_Angeles after t.
func UpstreamReset(t time.Time) time.Time {
	l := t.In(UpstreamZone)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, UpstreamZone)
}

// DayStarts returns, in Unix milliseconds, the starts of four calendar days
// of loc around t: yesterday, today, tomorrow and the day after. A limiter
// picks the day that holds its own clock's now among them, so that days
// (23 or 25 hours long when the clocks change) come from the zone database
// while the moment comes from the limiter's clock, up to a day away from
// the caller's.
func DayStarts(loc *time.Location, t time.Time) [4]int64 {
	l := t.In(loc)
	var out [4]int64
	for i := range out {
		out[i] = time.Date(l.Year(), l.Month(), l.Day()-1+i, 0, 0, 0, 0, loc).UnixMilli()
	}
	return out
}
