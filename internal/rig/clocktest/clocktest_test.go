package clocktest

import (
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	f := NewFake(at)
	f.Advance(time.Minute)
	f.AdvanceTo(at) // never back
	if got := f.Now(); !got.Equal(at.Add(time.Minute)) {
		t.Fatalf("got %s, want %s", got, at.Add(time.Minute))
	}
}
