package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func apiGetOK(u string) bool {
	res, err := http.Get(u)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}

func healthy(u string) bool {
	res, err := http.Get(u)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// promtoolCheck runs `promtool check metrics` on an exposition when
// promtool is installed (Debian's prometheus package; make test installs
// it when it may).
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: exposition not linted (apt-get install prometheus)")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// checkAlertSeries: the series the alert rules read beside the chart's age
// (deploy/prometheus) are on the daemon's /metrics: the chart's planned
// cadence and the limiter's recovery wait.
func checkAlertSeries(t *testing.T, u string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{`ingest_chart_cadence_seconds{chart="US"} 3600`,
		`ingest_limiter_recovery_wait_until_timestamp_seconds{pool="default"} 0`, `ingest_chart_age_seconds{chart="US"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics of run --every 1h --regions US: no %s\n%s", want, body)
		}
	}
}

// siteServed says whether the listener at base serves its site: /readyz
// answers, and not as the daemon's start does ("starting", while /healthz
// already answers and every other path is 503).
func siteServed(base string) bool {
	res, err := http.Get(base + "/readyz")
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var st struct {
		Status string `json:"status"`
	}
	return json.NewDecoder(res.Body).Decode(&st) == nil && st.Status != "starting"
}
