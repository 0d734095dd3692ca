package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAlertRules checks prometheus/ingest-alerts.yaml with promtool (check
// rules, then its tests: each rule fires on one series and not on another)
// where promtool is installed, and that every series a rule reads is one
// the product exports (metrics/), so that a renamed series cannot leave a
// rule that never fires.
func TestAlertRules(t *testing.T) {
	rules, err := os.ReadFile("prometheus/ingest-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var exported strings.Builder
	files, _ := filepath.Glob("../metrics/*.go")
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			exported.Write(data)
		}
	}
	names := regexp.MustCompile(`\bingest_[a-z_]+\b`).FindAllString(string(rules), -1)
	if len(names) == 0 {
		t.Fatal("no ingest_ series in the rules")
	}
	for _, name := range names {
		if !strings.Contains(exported.String(), `"`+name+`"`) {
			t.Errorf("prometheus/ingest-alerts.yaml reads %s, which metrics/ does not export", name)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian's prometheus package; make test installs it as root)")
	}
	for _, args := range [][]string{{"check", "rules", "ingest-alerts.yaml"}, {"test", "rules", "ingest-alerts.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestScrapeExample checks prometheus/scrape.example.yaml with promtool
// where it is installed, and that its job for a --public listener sends
// the access token as a bearer, which such a listener's /metrics asks for.
func TestScrapeExample(t *testing.T) {
	b, err := os.ReadFile("prometheus/scrape.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, public, ok := strings.Cut(string(b), "job_name: ingest-public")
	if !ok || !strings.Contains(public, "type: Bearer") || !strings.Contains(public, "credentials_file:") {
		t.Errorf("prometheus/scrape.example.yaml has no ingest-public job sending the token as a bearer from a file")
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed")
	}
	dir := t.TempDir()
	conf := strings.ReplaceAll(string(b), "/etc/prometheus/ingest-ui-token", filepath.Join(dir, "token"))
	rules, _ := os.ReadFile("prometheus/ingest-alerts.yaml")
	for name, data := range map[string]string{"prometheus.yml": conf, "token": "a-token", "ingest-alerts.yaml": string(rules)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(promtool, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}
