package main

// BenchmarkScale times the commands users wait for on a database of one day
// and on one of a year of hourly runs (internal/rig/yeardb, built by
// scripts/bench.sh), as the built binary runs them: make bench prints the
// year/day ratios. The databases come from INGEST_BENCH_DAY_DB and
// INGEST_BENCH_YEAR_DB; without them the benchmark is skipped. run --once
// and the daemon write to them (a run each time): they are scratch copies.
// With INGEST_BENCH_PG_DAY_URL and INGEST_BENCH_PG_YEAR_URL, the commands
// run on those PostgreSQL copies of the two (as store's BenchmarkPGYear
// leaves them), with the SQLite databases' picks.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
)

func BenchmarkScale(b *testing.B) {
	dbs := map[string]string{"day": os.Getenv("INGEST_BENCH_DAY_DB"), "year": os.Getenv("INGEST_BENCH_YEAR_DB")}
	if dbs["day"] == "" || dbs["year"] == "" {
		b.Skip("INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB name the databases (scripts/bench.sh builds them)")
	}
	srv := httptest.NewServer(fakeyt.New())
	defer srv.Close()
	for _, size := range []string{"day", "year"} {
		db := dbs[size]
		if url := os.Getenv("INGEST_BENCH_PG_" + strings.ToUpper(size) + "_URL"); url != "" {
			db = url
		}
		env := benchEnv(db, srv.URL+"/")
		p, err := yeardb.Pick(context.Background(), dbs[size])
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range scaleCommands(p, b.TempDir()) {
			b.Run(c.name+"/"+size, func(b *testing.B) {
				for b.Loop() {
					benchRun(b, env, c.args...)
				}
			})
		}
		b.Run("daemon-start/"+size, func(b *testing.B) { benchDaemon(b, env, "run", false) })
		b.Run("serve-start/"+size, func(b *testing.B) { benchDaemon(b, env, "serve", false) })
		b.Run("quota/"+size, func(b *testing.B) { benchDaemon(b, env, "run", true) })
	}
}

type scaleCommand struct {
	name string
	args []string
}

// scaleCommands are the commands timed on a database with picks p; the
// last day's export, so that both databases export as much.
func scaleCommands(p yeardb.Picks, dir string) []scaleCommand {
	day := p.End.Format(time.DateOnly)
	return []scaleCommand{
		{"version", []string{"version"}},
		{"report", []string{"report", "--json"}},
		{"search", []string{"search", "football", "--json"}},
		{"search-region", []string{"search", "football", "--region", "GB", "--json"}},
		{"search-rare", []string{"search", p.Rare, "--json"}},
		{"history", []string{"history", "--json", "--", p.Busiest}},
		{"history-all", []string{"history", "--json", "--since", "all", "--", p.Busiest}},
		{"export-day", []string{"export", "--since", day, "--out", filepath.Join(dir, "day.csv")}},
		{"export-per-day", []string{"export", "--since", day, "--per", "day", "--format", "parquet", "--out", filepath.Join(dir, "day.parquet")}},
		{"export-per-day-csv", []string{"export", "--since", day, "--per", "day", "--format", "csv", "--out", filepath.Join(dir, "day-per-day.csv")}},
		{"tokens-list", []string{"tokens", "list", "--json"}},
		{"quota-show", []string{"quota", "show"}},
		{"check", []string{"check", "--offline"}},
		{"backfill-dry", []string{"backfill", "--region", "GB", "--since", day, "--dry-run"}},
		{"prune-none", []string{"prune", "--keep", "400d"}},
		{"run-once", []string{"run", "--once", "--regions", "GB"}},
	}
}

func benchEnv(db, endpoint string) []string {
	return scratchEnv("PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"), "INGEST_DB="+db,
		"YOUTUBE_API_KEY="+testKey, "YOUTUBE_ENDPOINT="+endpoint, "INGEST_QUOTA_KEY="+yeardb.QuotaKey,
		"INGEST_LOG_LEVEL=warn", "INGEST_STANDING=extended", "INGEST_STATS_RETENTION=400d")
}

func benchRun(b *testing.B, env []string, args ...string) {
	cmd := exec.Command(ingestBin(b), args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("ingest %v: %v\n%.2000s", args, err, out)
	}
}

// benchDaemon starts the daemon (command run) or the read-only server
// (serve) and waits for /healthz, or, with quota set, times GET /quota on
// a started daemon.
func benchDaemon(b *testing.B, env []string, command string, quota bool) {
	addr := freeAddr(b)
	start := func() *exec.Cmd {
		args := []string{"run", "--every", "1h", "--regions", "GB", "--listen", addr}
		if command == "serve" {
			args = []string{"serve", "--listen", addr}
		}
		cmd := exec.Command(ingestBin(b), args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for !siteServed("http://"+addr) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		return cmd
	}
	stop := func(cmd *exec.Cmd) {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	if !quota {
		for b.Loop() {
			stop(start())
		}
		return
	}
	b.StopTimer()
	cmd := start()
	defer stop(cmd)
	b.StartTimer()
	for b.Loop() {
		if !ok("http://" + addr + "/quota") {
			b.Fatal("GET /quota failed")
		}
	}
}

func ok(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr())
}
