package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// movedRuns runs `run --once` for regions twice, an hour of the fake's
// clock apart, so that the charts differ between the runs.
func movedRuns(t *testing.T, h *harness, regions string) {
	t.Helper()
	var mu sync.Mutex
	now := fakeyt.Anchor
	h.fake.Move(3, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	h.mustRun(0, "run", "--once", "--regions", regions)
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	h.mustRun(0, "run", "--once", "--regions", regions)
}

func TestExportJSONLAndFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	movedRuns(t, h, "GB,AU")
	res := h.mustRun(0, "export", "--since", "2000-01-01", "--region", "gb", "--category", "all", "--format", "jsonl")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2*fakeyt.ChartLengths["GB"] {
		t.Fatalf("%d lines for GB, want %d", len(lines), 2*fakeyt.ChartLengths["GB"])
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["region"] != "GB" || rec["rank"] != 1.0 || rec["video_id"] == "" {
		t.Errorf("first line = %v", rec)
	}
	// the columns read from the others, from what the passes stored: the
	// category's name from videoCategories.list, the day in London's zone
	at, err := time.Parse(time.RFC3339, rec["trending_date"].(string))
	if err != nil {
		t.Fatal(err)
	}
	london, _ := time.LoadLocation("Europe/London")
	for key, want := range map[string]any{"video_url": "https://www.youtube.com/watch?v=" + rec["video_id"].(string),
		"chart_name": "all", "trending_day": at.In(london).Format(time.DateOnly)} {
		if rec[key] != want {
			t.Errorf("%s = %v, want %v", key, rec[key], want)
		}
	}
	if name, _ := rec["category_name"].(string); name == "" || rec["categoryId"] == nil {
		t.Errorf("category_name %q for categoryId %v: want the upstream's name", name, rec["categoryId"])
	}
	// a window with no row is exit 3, its file written all the same
	if res := h.mustRun(3, "export", "--since", "2000-01-01", "--category", "music", "--format", "jsonl"); res.stdout != "" {
		t.Errorf("no music chart was fetched, yet the export holds %q", res.stdout)
	}
	if res := h.mustRun(3, "export", "--since", "2000-01-01", "--until", "2000-02-01"); strings.Count(res.stdout, "\n") != 1 || !strings.Contains(res.stderr, "no row in the window") {
		t.Errorf("an empty range: want the header alone and exit 3 saying why, got %s", res)
	}
}

func TestExportUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "AU")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export"}, "--since"},
		{[]string{"export", "--since", "yesterday"}, "--since"},
		{[]string{"export", "--since", "2026-11-02", "--until", "2026-11-01"}, "--until"},
		{[]string{"export", "--since", "2026-11-01", "--format", "xlsx"}, "--format"},
		{[]string{"export", "--since", "2026-11-01", "--category", "knitting"}, "--category"},
		{[]string{"export", "--since", "2026-11-01", "--region", "XX1"}, "--region"},
		{[]string{"export", "--since", "7 days"}, "--since: want a span back from now in days (7d), weeks (1w) or hours (24h"},
		{[]string{"export", "--since", "7d", "--until", "0d"}, "--until: want a span"},
		{[]string{"export", "--since", "7d", "--out", "charts-{data}.csv"}, "--out charts-{data}.csv: {data} is no name of a day"},
	} {
		res := h.mustRun(2, c.args...)
		if !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: stderr %q does not name %s", c.args, res.stderr, c.want)
		}
	}
	// A file in a directory that does not exist: the user's to fix, exit 2.
	res := h.mustRun(2, "export", "--since", "2000-01-01", "--out", filepath.Join(h.dir, "no", "such", "dir.csv"))
	if !strings.Contains(res.stderr, "--out") {
		t.Errorf("stderr %q does not name --out", res.stderr)
	}
}

// A weekly cron line: export --since 1w writes the runs of the last week
// to the file --out names with the day it ends, without the shell's
// arithmetic; the same line again is refused, naming --force. The export
// reads its house clock two minutes on, since a span ends at the minute
// and the run started in this one.
func TestExportSpanWritesTheDatedFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "AU")
	before := time.Now().UTC().Add(2 * time.Minute)
	h.clockAt(before)
	h.mustRun(0, "export", "--since", "1w", "--out", filepath.Join(h.dir, "charts-{date}.csv"))
	after := time.Now().UTC().Add(2 * time.Minute)
	names, _ := filepath.Glob(filepath.Join(h.dir, "charts-*.csv"))
	if len(names) != 1 || (filepath.Base(names[0]) != "charts-"+before.Format(time.DateOnly)+".csv" &&
		filepath.Base(names[0]) != "charts-"+after.Format(time.DateOnly)+".csv") {
		t.Fatalf("files %v, want charts-%s.csv", names, after.Format(time.DateOnly))
	}
	all := h.mustRun(0, "export", "--since", "2000-01-01").stdout
	if got := string(fileBytes(t, names[0])); got != all || strings.Count(got, "\n") < 1+fakeyt.ChartLengths["AU"] {
		t.Errorf("%s holds %d lines, want the %d of every run stored, AU's chart of %d and more", names[0],
			strings.Count(got, "\n"), strings.Count(all, "\n"), fakeyt.ChartLengths["AU"])
	}
	if before.Format(time.DateOnly) == after.Format(time.DateOnly) {
		res := h.mustRun(2, "export", "--since", "1w", "--out", filepath.Join(h.dir, "charts-{date}.csv"))
		if !strings.Contains(res.stderr, "--force") {
			t.Errorf("the same week's file again: want exit 2 naming --force\n%s", res)
		}
	}
}

// export --out leaves an existing file as it is, exit 2 naming --force,
// and replaces it with --force; a directory on a read-only mount is exit
// 2 naming the mount, as --db there is.
func TestExportOutKeepsAFileUnlessForced(t *testing.T) {
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	out := filepath.Join(h.dir, "trending.csv")
	writeFile(t, out, "mine\n")
	res := h.mustRun(2, "export", "--since", "2020-01-01", "--out", out)
	if !strings.Contains(res.stderr, "--force") || string(fileBytes(t, out)) != "mine\n" {
		t.Errorf("an existing --out: want exit 2 naming --force and the file kept\n%s", res)
	}
	h.mustRun(0, "export", "--since", "2020-01-01", "--out", out, "--force")
	if string(fileBytes(t, out)) == "mine\n" {
		t.Errorf("--force did not replace the file")
	}
	dir := smallDisk(t, "8m")
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	res = h.mustRun(2, "export", "--since", "2020-01-01", "--out", filepath.Join(dir, "x.csv"))
	if line := lastLine(res.stderr); !strings.Contains(line, "is on a read-only file system") {
		t.Errorf("export to a read-only mount: last line %q, want the mount named\n%s", line, res)
	}
}

// export --out writes only a regular file: a named pipe, a device, a
// directory and a socket are exit 2 naming --out, --force or not, and are
// left as they were; a symbolic link to a regular file writes the file it
// leads to (with --force, as the file exists) and stays a link; a link
// that leads nowhere is exit 2 naming it, and nothing is created.
func TestExportOutWritesOnlyARegularFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	fifo := filepath.Join(h.dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.dir, "adir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(h.dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ out, says string }{
		{fifo, "is a named pipe"}, {"/dev/null", "is a device"}, {dir, "is a directory"}, {sock, "is a socket"},
	} {
		before, _ := os.Lstat(tc.out)
		for _, force := range []bool{false, true} {
			args := []string{"export", "--since", "2020-01-01", "--out", tc.out}
			if force {
				args = append(args, "--force")
			}
			res := h.runWithin(cmdTimeout, args...)
			if res.code != 2 || !strings.Contains(res.stderr, "--out "+tc.out) || !strings.Contains(res.stderr, tc.says) {
				t.Errorf("want exit 2 naming --out and saying %q, got %s", tc.says, res)
			}
			if after, err := os.Lstat(tc.out); err != nil || after.Mode() != before.Mode() {
				t.Errorf("--out %s (force %v): was %v, is now %v (%v)", tc.out, force, before.Mode(), after.Mode(), err)
			}
		}
	}

	target := filepath.Join(h.dir, "real.csv")
	writeFile(t, target, "mine\n")
	link := filepath.Join(h.dir, "link.csv")
	if err := os.Symlink("real.csv", link); err != nil {
		t.Fatal(err)
	}
	h.mustRun(2, "export", "--since", "2020-01-01", "--out", link)
	h.mustRun(0, "export", "--since", "2020-01-01", "--out", link, "--force")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if got := string(fileBytes(t, target)); !strings.Contains(got, "video_id") {
		t.Errorf("the link's target was not written: %q", got)
	}

	dangling := filepath.Join(h.dir, "dangling.csv")
	if err := os.Symlink("gone/nowhere.csv", dangling); err != nil {
		t.Fatal(err)
	}
	res := h.run("export", "--since", "2020-01-01", "--out", dangling, "--force")
	if res.code != 2 || !strings.Contains(res.stderr, "--out "+dangling) || !strings.Contains(res.stderr, "does not exist") {
		t.Errorf("a dangling link: want exit 2 naming --out and its target, got %s", res)
	}
	if st, err := os.Lstat(dangling); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v %v", st, err)
	}
}

// A row names its category in English and in its region's language,
// from the one videoCategories.list a region reads a day, asked in that
// language: JP's rows read エンターテイメント beside Entertainment, GB's
// English twice, and the
// names cost one call a region, as they did in English alone.
func TestExportNamesTheCategoryInTheRegionsLanguage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "GB,JP")
	if n := h.fake.ChargedByOp(testKey)[ingest.OpCategoriesList]; n != 2 {
		t.Errorf("videoCategories.list charged %d times for two regions, want 2", n)
	}
	for _, q := range h.reqs.requests("/videoCategories") {
		region, hl := q.Query().Get("regionCode"), q.Query().Get("hl")
		if want := map[string]string{"GB": "en-GB", "JP": "ja"}[region]; hl != want {
			t.Errorf("videoCategories.list for %s asked hl=%q, want %q", region, hl, want)
		}
	}
	res := h.mustRun(0, "export", "--since", "2000-01-01", "--format", "jsonl")
	names := map[string]map[string]string{} // region -> English -> local
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		region, en, local := rec["region"].(string), rec["category_name"].(string), rec["category_name_local"].(string)
		if names[region] == nil {
			names[region] = map[string]string{}
		}
		names[region][en] = local
	}
	if len(names["JP"]) == 0 || len(names["GB"]) == 0 {
		t.Fatalf("no categories named in JP's or GB's rows: %v", names)
	}
	for en, local := range names["JP"] {
		if en == "" || local == "" || local == en {
			t.Errorf("JP's rows of %q: category_name_local %q, want its Japanese name", en, local)
		}
	}
	if got := names["JP"]["Entertainment"]; got != "エンターテイメント" && got != "" {
		t.Errorf("JP's rows of Entertainment: category_name_local %q, want エンターテイメント", got)
	}
	for en, local := range names["GB"] {
		if en == "" || local != en {
			t.Errorf("GB's rows of %q: category_name_local %q, want the English name again", en, local)
		}
	}
}

// A chart that moves while a run reads its pages is stored with the rank
// it lost said: the video met on the first page and again on the second
// keeps its first rank, the place it took on the second is held by no
// row; the run's message names it, and each of the run's rows counts it
// under ranks_lost. Two moves: the video at 10 served again at 55, and
// the commonest, the last of the first page pushed to the first place of
// the second, which a rank kept from the later page would lose at the
// first page's end, where no gap can be told from a short page.
func TestExportSaysTheRanksAMovingChartLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b, lost int }{{10, 55, 55}, {50, 51, 51}} {
		t.Run(fmt.Sprintf("%d-%d", tc.a, tc.b), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.fake.SwapBetweenPages("GB", tc.a, tc.b)
			h.mustRun(0, "run", "--once", "--regions", "GB")
			db := openDB(t, h.db())
			id := queryInt(t, db, `SELECT max(id) FROM runs WHERE kind = 'trending'`)
			want := fmt.Sprintf("the chart moved between its pages: rank %d lost", tc.lost)
			if msg := queryString(t, db, `SELECT message FROM runs WHERE id = ?`, id); !strings.Contains(msg, want) {
				t.Errorf("run %d's message %q: want the rank it lost named (%q)", id, msg, want)
			}
			res := h.mustRun(0, "export", "--since", "2000-01-01", "--format", "jsonl")
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			if len(lines) != fakeyt.ChartLengths["GB"]-1 {
				t.Errorf("%d rows, want GB's %d less the rank lost", len(lines), fakeyt.ChartLengths["GB"])
			}
			for _, line := range lines {
				var r struct {
					Rank      int `json:"rank"`
					RanksLost int `json:"ranks_lost"`
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Rank == tc.lost || r.RanksLost != 1 {
					t.Errorf("rank %d says ranks_lost %d: want no rank %d, and 1 lost on every row", r.Rank, r.RanksLost, tc.lost)
				}
			}
		})
	}
}
