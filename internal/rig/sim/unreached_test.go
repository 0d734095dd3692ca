package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsACallRefusedAtDialKeptInTheLedger(t *testing.T) {
	at := t0.Add(time.Minute)
	h := &History{Config: Config{Start: t0}, End: t0.Add(time.Hour),
		Unreached: []Call{
			{At: at, Sent: at, Worker: WorkerDaemon, Kind: KindChart, Region: "US", Refused: true},
			{At: at.Add(400 * time.Millisecond), Sent: at.Add(400 * time.Millisecond), Worker: WorkerDaemon, Kind: KindChart, Region: "US", Refused: true},
		},
		Ledger: []Entry{
			{Pool: "default", Units: 1, At: at, GivenBack: true},
			{Pool: "default", Units: 1, At: at.Add(400 * time.Millisecond), GivenBack: true},
			{Pool: "default", Units: 1, At: at.Add(time.Second)},
		}}
	if f := checkUnreachedGivenBack(h); len(f) != 0 {
		t.Fatalf("both given back: %q", f)
	}
	h.Ledger[1].GivenBack = false
	f := checkUnreachedGivenBack(h)
	if len(f) != 1 || !strings.Contains(f[0], "1 of 2 calls refused at dial, which never reached the upstream, were not given back in the ledger: chart US   by the daemon at 2026-10-25T00:01:00.4Z") {
		t.Errorf("one kept: %q", f)
	}
	// a call given back at another moment gives back no other
	h.Ledger[1].GivenBack, h.Ledger[1].At = true, at.Add(time.Second)
	if f := checkUnreachedGivenBack(h); len(f) != 1 {
		t.Errorf("given back a second later: %q", f)
	}
}

func TestCheckHoldsACallRefusedAtDialToItsRetries(t *testing.T) {
	h := attempted(t, try{status: 200})
	at := h.Calls[0].At
	h.Calls[0].At, h.Calls[0].Sent = at.Add(400*time.Millisecond), at.Add(400*time.Millisecond)
	h.Unreached = []Call{{At: at, Sent: at, Worker: WorkerDaemon, Path: "/youtube/v3/videos", Kind: KindChart, Region: "US", Refused: true}}
	f := checkRetried(h)
	if len(f) != 1 || !strings.Contains(f[0], "1 retries were not said as they went, with the attempt they follow, the wait they drew and why it failed: chart US   at 2026-10-25T00:01:00Z (attempt 1, refused at dial), tried again 400ms after it, said nothing") {
		t.Errorf("a retry of a call refused at dial, not said: %q", f)
	}
	h.Calls = nil
	f = checkRetried(h)
	if len(f) != 1 || !strings.Contains(f[0], "1 calls the upstream failed for a moment were not tried again within their wait, with attempts left: chart US   at 2026-10-25T00:01:00Z (attempt 1, refused at dial)") {
		t.Errorf("a call refused at dial, not tried again: %q", f)
	}
}
