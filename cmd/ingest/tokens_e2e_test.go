package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A token whose plan was taken out of the plans file: serve warns at its
// start, tokens list shows it unusable, and its 401 says why.
func TestTokenOfARemovedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	before := filepath.Join(h.dir, "plans-before.yaml")
	after := filepath.Join(h.dir, "plans-after.yaml")
	writeFile(t, before, "plans:\n  anonymous: {limit: 10, window: 1h}\n  gold: {limit: 10, window: 1h}\n  silver: {limit: 10, window: 1h}\n")
	writeFile(t, after, "plans:\n  anonymous: {limit: 10, window: 1h}\n  silver: {limit: 10, window: 1h}\n")
	h.set("INGEST_API_PLANS", before)
	tok := lastLine(h.mustRun(0, "tokens", "add", "acme", "--plan", "gold").stdout)
	h.mustRun(0, "tokens", "add", "bolt", "--plan", "silver")
	h.set("INGEST_API_PLANS", after)

	list := h.mustRun(0, "tokens", "list")
	if !regexp.MustCompile(`(?m)^acme\s+gold\s+no: plan not in `).MatchString(list.stdout) ||
		!regexp.MustCompile(`(?m)^bolt\s+silver\s+yes\s`).MatchString(list.stdout) {
		t.Errorf("tokens list: want acme unusable and bolt usable:\n%s", list)
	}
	var listed []struct {
		Name   string `json:"name"`
		Usable bool   `json:"usable"`
	}
	js := h.mustRun(0, "tokens", "list", "--json")
	if err := json.Unmarshal([]byte(js.stdout), &listed); err != nil || len(listed) != 2 || listed[0].Usable || !listed[1].Usable {
		t.Errorf("tokens list --json: want acme usable false, bolt true; got %+v (%v)\n%s", listed, err, js)
	}

	addr := closedAddr(t)
	p := h.start("serve", "--listen", addr)
	base := "http://" + addr
	if !waitFor(30*time.Second, func() bool { return apiGetOK(base + "/healthz") }) {
		t.Fatalf("ingest serve never answered on %s\n%s", addr, p.out)
	}
	a := apiGet(t, base, "/api/v1/charts/US", tok, "")
	if a.code != 401 || !strings.Contains(a.body, `\"gold\" is not in this server's plans file`) {
		t.Errorf("a token of a removed plan: want 401 saying its plan is not in the plans file, got %d %s", a.code, a.body)
	}
	warned := false
	for _, line := range strings.Split(p.out.String(), "\n") {
		warned = warned || (strings.Contains(line, "WARN") && strings.Contains(line, "token=acme") && strings.Contains(line, "plan=gold"))
	}
	if !warned {
		t.Errorf("serve did not warn at start about acme's plan gold:\n%s", p.out)
	}
}
