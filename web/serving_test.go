package web

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web/throttle"
)

// A listener says once what it serves; one that serves the operational
// routes alone (not a loopback address, no token) is warned of first,
// with its address and the variable that would serve the rest.
func TestSayServingWarnsOfTheRoutesLeftOut(t *testing.T) {
	t.Parallel()
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte("plans:\n  anonymous: {limit: 1000000, window: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, token, listen string
		lines               []string
	}{
		{"loopback", "", "127.0.0.1:8080", []string{`level=INFO msg=serving url=http://127.0.0.1:8080/ serves="/metrics, /healthz, /readyz, /quota, the API and the dashboard"`}},
		{"token", "t0ken-of-32-characters-or-more-xxxxxxxx", "0.0.0.0:8080", []string{`serves="/metrics, /healthz, /readyz, /quota, the API and the dashboard"`}},
		{"neither", "", "0.0.0.0:8080", []string{
			`level=WARN msg="--listen serves only /healthz, /readyz and /metrics: it is not a loopback address and INGEST_UI_TOKEN is not set, so the dashboard, the API and /quota would be public" addr=0.0.0.0:8080`,
			`level=INFO msg=serving url=http://127.0.0.1:8080/ serves="/metrics, /healthz and /readyz"`}},
	} {
		s, err := New(Config{Clock: clock.System, Token: c.token, Listen: c.listen, Routes: daemonRoutes(),
			Meter: &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: noTokens{}}})
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		s.SayServing(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})), "http://127.0.0.1:8080/", c.listen)
		got := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(got) != len(c.lines) {
			t.Errorf("%s: said %q, want %d lines", c.name, got, len(c.lines))
			continue
		}
		for i, want := range c.lines {
			if !strings.Contains(got[i], want) {
				t.Errorf("%s: line %d %q, want %q", c.name, i, got[i], want)
			}
		}
		s.Close()
	}
}
