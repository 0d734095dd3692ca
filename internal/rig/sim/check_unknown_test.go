package sim

import (
	"strings"
	"testing"
	"time"
)

// A decision given up at 10:00 went ahead unmetered (seq 5); a call Redis
// admitted after it (seq 6) is an answer, after which the ledger keeps the
// decision no longer: one kept is found, in either database; one whose
// worker got no answer after it (the calls after it unmetered, or given
// back), or that went ahead as no call, is let be.
func TestCheckFindsAnUnknownDecisionKeptAfterRedisAnswered(t *testing.T) {
	at := t0.Add(10 * time.Hour)
	ledger := func(peer bool) *History {
		h := &History{Ledger: []Entry{
			{Pool: "default", Units: 1, At: at.Add(-time.Minute), Seq: 4, Peer: peer},
			{Pool: "default", Units: 1, At: at, Seq: 5, Unmetered: true, Peer: peer},
			{Pool: "default", Units: 1, At: at, Seq: 6, Peer: peer},
		}}
		h.Unknowns = []Unknown{{Op: "videos.list", At: at, Peer: peer}}
		return h
	}
	h := ledger(true)
	if f := checkUnknownsSettled(h); len(f) != 1 || !strings.Contains(f[0], "the other worker's database kept a decision of videos.list of unknown outcome from 2026-10-25T10:00:00Z to the end, though Redis admitted a call of it after (at 2026-10-25T10:00:00Z)") {
		t.Errorf("kept after an answer: %q", f)
	}
	if f := checkUnknownsSettled(ledger(false)); len(f) != 1 || !strings.Contains(f[0], "the daemon's database kept") {
		t.Errorf("kept after an answer, the daemon's: %q", f)
	}
	h.Unknowns = nil
	if f := checkUnknownsSettled(h); len(f) != 0 {
		t.Errorf("settled: %q", f)
	}
	h = ledger(true)
	h.Ledger[2].Unmetered = true
	if f := checkUnknownsSettled(h); len(f) != 0 {
		t.Errorf("no answer after it, the next call unmetered too: %q", f)
	}
	h.Ledger[2].Unmetered, h.Ledger[2].GivenBack = false, true
	if f := checkUnknownsSettled(h); len(f) != 0 {
		t.Errorf("the call after it given back: %q", f)
	}
	h = ledger(true)
	h.Ledger[1].Unmetered = false
	if f := checkUnknownsSettled(h); len(f) != 0 {
		t.Errorf("refused, no call unmetered: %q", f)
	}
	h = ledger(true)
	h.Unknowns[0].Peer = false
	if f := checkUnknownsSettled(h); len(f) != 0 {
		t.Errorf("an unknown of the daemon's, the answer in the other database: %q", f)
	}
}
