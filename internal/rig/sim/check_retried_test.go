package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// try is one attempt of a chart page: how the upstream answered it, the
// wait after it, and what the daemon's log says of the retry after it
// (attempt and delay; a zero attempt says nothing).
type try struct {
	status     int
	proxy, cut bool
	wait       time.Duration
	sayAttempt int
	sayDelay   time.Duration
	sayErr     string
	worker     string
}

// attempted is a history of one chart page's attempts as tries say, the
// daemon's log saying each retry as it goes.
func attempted(t *testing.T, tries ...try) *History {
	h := &History{Config: Config{Start: t0}, End: t0.Add(24 * time.Hour), Starts: []time.Time{t0}, Log: filepath.Join(t.TempDir(), "daemon.log")}
	at := t0.Add(time.Minute)
	var log strings.Builder
	for i, tr := range tries {
		worker := tr.worker
		if worker == "" {
			worker = WorkerDaemon
		}
		h.Calls = append(h.Calls, Call{Sent: at, At: at, Worker: worker, Path: "/youtube/v3/videos", Kind: KindChart, Region: "US",
			Status: tr.status, Proxy: tr.proxy, Cut: tr.cut})
		if i > 0 && tries[i-1].sayAttempt > 0 {
			p := tries[i-1]
			log.WriteString(fmt.Sprintf("time=%s level=WARN msg=\"upstream attempt failed; retrying\" op=videos.list attempt=%d delay=%s err=%q\n",
				at.UTC().Format(time.RFC3339Nano), p.sayAttempt, p.sayDelay, p.sayErr))
		}
		at = at.Add(tr.wait)
	}
	if err := os.WriteFile(h.Log, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// failing is the four attempts of a page the upstream fails three times
// (its own 503, a proxy's 429, an answer cut short) and then answers, each
// retry said as it goes.
func failing() []try {
	return []try{
		{status: 503, wait: 400 * time.Millisecond, sayAttempt: 1, sayDelay: 400 * time.Millisecond, sayErr: "fetch US videos.list: HTTP 503 backendError: down"},
		{status: 429, proxy: true, wait: 700 * time.Millisecond, sayAttempt: 2, sayDelay: 700 * time.Millisecond, sayErr: "HTTP 429 : Too Many Requests, an answer that is no error of the API's"},
		{status: 200, cut: true, wait: 1500 * time.Millisecond, sayAttempt: 3, sayDelay: 1500 * time.Millisecond, sayErr: "malformed response from the upstream: unexpected EOF"},
		{status: 200},
	}
}

func TestCheckHoldsEachTransientFailureToItsRetries(t *testing.T) {
	if f := checkRetried(attempted(t, failing()...)); len(f) != 0 {
		t.Fatalf("three failures each tried again and said: %q", f)
	}
	// a proxy's 500 taken for final: the page is not asked again
	final := checkRetried(attempted(t, try{status: 500, proxy: true}))
	if len(final) != 1 || !strings.Contains(final[0], "1 calls the upstream failed for a moment were not tried again within their wait, with attempts left: chart US   at 2026-10-25T00:01:00Z (attempt 1, HTTP 500)") {
		t.Errorf("a proxy's 500 not tried again: %q", final)
	}
	// the same, the process stopped at once: the stop is why
	h := attempted(t, try{status: 500, proxy: true})
	h.Down = []Interval{{t0.Add(time.Minute + time.Second), t0.Add(time.Hour)}}
	if f := checkRetried(h); len(f) != 0 {
		t.Errorf("a failure the process stopped after: %q", f)
	}
	// a proxy's 404 is no failure for a moment: not tried again, rightly
	if f := checkRetried(attempted(t, try{status: 404, proxy: true})); len(f) != 0 {
		t.Errorf("a proxy's 404: %q", f)
	}
	// a fifth attempt
	five := failing()
	five[3] = try{status: 502, proxy: true, wait: 3 * time.Second, sayAttempt: 4, sayDelay: 3 * time.Second, sayErr: "HTTP 502 : Bad Gateway"}
	five = append(five, try{status: 200})
	fifth := checkRetried(attempted(t, five...))
	if len(fifth) != 1 || !strings.Contains(fifth[0], "1 calls were tried again after their 4th attempt failed: chart US   at 2026-10-25T00:01:02.6Z (attempt 4, HTTP 502), asked again 3s after it") {
		t.Errorf("a fifth attempt: %q", fifth)
	}
	// only three attempts: the third failure not tried again
	three := failing()[:3]
	if f := checkRetried(attempted(t, three...)); len(f) != 1 || !strings.Contains(f[0], "(attempt 3, an answer cut short)") {
		t.Errorf("three attempts: %q", f)
	}
	// each retry said otherwise than it went
	for name, change := range map[string]func(*try){
		"the attempt one less": func(tr *try) { tr.sayAttempt-- },
		"the attempt one more": func(tr *try) { tr.sayAttempt++ },
		"a wait past the most": func(tr *try) { tr.sayDelay = 2 * time.Second },
		"a wait it did not take": func(tr *try) {
			tr.sayDelay = 1 * time.Second
		},
		"another cause": func(tr *try) { tr.sayErr = "HTTP 500 : Internal Server Error" },
		"nothing":       func(tr *try) { tr.sayAttempt = 0 },
	} {
		tries := failing()
		change(&tries[1])
		f := checkRetried(attempted(t, tries...))
		if len(f) != 1 || !strings.Contains(f[0], "1 retries were not said as they went, with the attempt they follow, the wait they drew and why it failed: chart US   at 2026-10-25T00:01:00.4Z (attempt 2, HTTP 429), tried again 700ms after it") {
			t.Errorf("%s: %q", name, f)
		}
	}
	// another worker's attempts are its own log's
	other := failing()
	for i := range other {
		other[i].worker, other[i].sayAttempt = WorkerOnce, 0
	}
	if f := checkRetried(attempted(t, other...)); len(f) != 0 {
		t.Errorf("a run --once beside the daemon: %q", f)
	}
}
