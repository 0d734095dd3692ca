package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/throttle"
)

// APIRouteNames are the names a plans file prices routes by: the first
// segment after /api/v1/.
func APIRouteNames() []string {
	var out []string
	for _, rt := range (&Server{}).table() {
		if name := routeName(rt.Pattern); rt.Kind == API && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// routeName is "search" for "GET /api/v1/search", "charts" for
// "GET /api/v1/charts/{region}", "" for the catch-all and the index.
func routeName(pattern string) string {
	_, path, _ := strings.Cut(pattern, " /")
	rest, ok := strings.CutPrefix("/"+strings.TrimPrefix(path, "/"), "/api/v1/")
	if !ok || strings.HasPrefix(rest, "{") {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// metered is an API route under the plans; open says a caller without a
// token is served, on the anonymous plan.
func (s *Server) metered(rt Route, open bool) http.Handler {
	units := s.cfg.Meter.Plans.Cost(routeName(rt.Pattern))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && s.signedIn(r) {
			rt.Handler.ServeHTTP(w, r)
			return
		}
		plan, client, caller := s.caller(w, r, open)
		if caller == asOperator || (caller == asClient && s.admit(w, r, plan, client, units)) {
			rt.Handler.ServeHTTP(w, r)
		}
	})
}

// who a metered request is.
type who int

const (
	asAnswered who = iota // refused already
	asOperator            // the holder of Config.Token: not metered
	asClient              // metered as the client named
)

// caller names the plan and the client a request is metered as, or says
// it is the operator's, or answers it (401, or 429 while its address must
// wait) when it is neither; open says a caller without a token is an
// anonymous client rather than refused, by its address (an IPv6 one by
// its /64, as the throttle counts it). A bearer token is looked up among the clients'
// first: theirs are random and beyond guessing, so they are never held
// back by the throttle of wrong tokens; only one that is none of theirs is
// tried as the access token.
func (s *Server) caller(w http.ResponseWriter, r *http.Request, open bool) (ratelimit.APIPlan, string, who) {
	m := s.cfg.Meter
	tok, isBearer := bearer(r)
	if !isBearer {
		plan, ok := m.Plans.Plan(ratelimit.AnonymousPlan)
		if !open || !ok {
			apiUnauthorized(w, r)
			return plan, "", asAnswered
		}
		return plan, "addr-" + shortHash(throttle.ClientKey(s.clientAddr(r))), asClient
	}
	hash := clients.TokenHash(tok)
	name, ok, err := m.TokenPlan(r.Context(), hash, s.cfg.Clock.Now())
	if err != nil {
		s.fail(w, r, err)
		return ratelimit.APIPlan{}, "", asAnswered
	}
	if !ok {
		if v := s.try(r, tok); v.OK {
			return ratelimit.APIPlan{}, "", asOperator
		} else if v.Wait > 0 {
			apiThrottled(w, v)
			return ratelimit.APIPlan{}, "", asAnswered
		}
	}
	plan, known := m.Plans.Plan(name)
	if !ok || !known || name == ratelimit.AnonymousPlan {
		if ok {
			s.cfg.Logger.Warn("api: a token's plan is not in the plans file: its requests are refused", ingest.LogPlan, name)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="ingest", error="invalid_token"`)
		msg := "the token is unknown or revoked"
		if ok {
			msg = fmt.Sprintf("the token's plan %q is not in this server's plans file: ask the operator to add the plan, or for a token on another plan", name)
		}
		apiError(w, http.StatusUnauthorized, "unauthorized", "", msg)
		return plan, "", asAnswered
	}
	s.touch(r.Context(), hash)
	return plan, "token-" + hash[:32], asClient
}

// touch writes a token's last use (Meter.Touch).
func (s *Server) touch(ctx context.Context, hash string) {
	if err := s.cfg.Meter.Touch(ctx, hash, s.cfg.Clock.Now()); err != nil {
		s.cfg.Logger.Debug("api: record a token's use", ingest.LogErr, err)
	}
}

// admit asks the limiter, sets the RateLimit fields, and answers a refusal
// with 429. A limiter that cannot decide lets the request through: serving
// a read is cheap, and an outage of the limiter is no reason to fail reads.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, plan ratelimit.APIPlan, client string, units int64) bool {
	m := s.cfg.Meter
	h := w.Header()
	throttle.SetPolicy(h, plan.Name, plan.Limit, plan.Window)
	now := s.cfg.Clock.Now()
	res, err := m.Allow(r.Context(), plan, client, units, now)
	if err != nil {
		m.Count(plan.Name, "unmetered")
		m.WarnUnavailable(s.cfg.Logger, plan.Name, err, now)
		return true
	}
	retry := throttle.SetRemaining(h, plan.Name, res.Remaining, res.Wait, !res.Allowed)
	if res.Allowed {
		m.Count(plan.Name, "allowed")
		return true
	}
	m.Count(plan.Name, "refused")
	apiError(w, http.StatusTooManyRequests, "rate_limited", "",
		fmt.Sprintf("plan %s allows %d units per %s and this request costs %d: retry in %d s (Retry-After)",
			plan.Name, plan.Limit, plan.Window, units, retry))
	return false
}

// clientAddr is the address a request is metered and throttled by, as
// the trusted proxies in front (Config.TrustedProxies) say it.
func (s *Server) clientAddr(r *http.Request) string {
	return edge.Proxies(s.cfg.TrustedProxies).Client(r)
}

// shortHash names a client address without writing it into the limiter's
// keys.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}
