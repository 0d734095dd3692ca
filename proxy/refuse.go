package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/web/throttle"
)

// apiError is the upstream's error body, which the official clients read.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Errors  []apiErrorRow `json:"errors"`
}

type apiErrorRow struct {
	Message string `json:"message"`
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
}

// writeError answers code in the upstream's shape, one error of reason in
// domain saying msg.
func writeError(w http.ResponseWriter, code int, domain, reason, msg string) {
	b, _ := json.Marshal(apiError{apiErrorBody{Code: code, Message: msg,
		Errors: []apiErrorRow{{Message: msg, Domain: domain, Reason: reason}}}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// refusal is why a call is not sent: the budget that has no room for it,
// how big it is, what it has left and when it frees.
type refusal struct {
	budget    string // as the message and the RateLimit fields name it
	limit     int64
	window    time.Duration
	remaining int64
	freeAt    time.Time
	// spent says the budget is spent until the upstream's reset (or
	// blocked): 403 quotaExceeded, not 429.
	spent bool
	why   string
}

// refuse answers r in the upstream's shape with Retry-After and the
// RateLimit fields, now by the house clock.
func refuse(w http.ResponseWriter, r refusal, now time.Time) {
	h := w.Header()
	throttle.SetPolicy(h, r.budget, r.limit, r.window)
	retry := throttle.SetRemaining(h, r.budget, r.remaining, r.freeAt.Sub(now), true)
	msg := fmt.Sprintf("ingest proxy: %s has no room for this call (%s): it frees at %s, in %d s (Retry-After)",
		r.budget, r.why, r.freeAt.UTC().Format(time.RFC3339), retry)
	if r.spent {
		writeError(w, http.StatusForbidden, "youtube.quota", "quotaExceeded", msg)
		return
	}
	writeError(w, http.StatusTooManyRequests, "youtube.quota", "rateLimitExceeded", msg)
}

// limiterRefusal is the refusal of the limiter's decision d: the first
// pool of d that had no room, spent when it frees at the upstream's reset
// or later, or is blocked.
func limiterRefusal(costs *ingest.Costs, d ingest.Decision, now time.Time) refusal {
	r := refusal{budget: "the quota", freeAt: d.RetryAt, why: "the limiter refused it"}
	for _, s := range d.Pools {
		cost := d.Units(s.Pool)
		if c, err := costs.Op(d.Op); err == nil {
			cost = unitsOf(c, s.Pool)
		}
		if s.BlockedUntil.IsZero() && s.Remaining >= cost {
			continue
		}
		p, _ := costs.Pool(s.Pool)
		r.budget, r.limit, r.window, r.remaining = "pool "+s.Pool, p.Capacity(), p.Window, s.Remaining
		r.why = fmt.Sprintf("%s costs %d, %d left", d.Op, cost, s.Remaining)
		if !s.BlockedUntil.IsZero() {
			r.why = "the upstream said its quota is spent"
		}
		r.spent = !s.BlockedUntil.IsZero() || !d.RetryAt.Before(ingest.UpstreamReset(now).Add(-time.Minute))
		break
	}
	return r
}

func unitsOf(charges []ingest.Charge, pool string) int64 {
	for _, c := range charges {
		if c.Pool == pool {
			return c.Units
		}
	}
	return 0
}
