package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// recipeBlocks are the fenced blocks of lang in a docs page, in order.
func recipeBlocks(t *testing.T, page, lang string) []string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(text), -1) {
		out = append(out, m[1])
	}
	return out
}

// The weekly CSV recipe runs as written: its shell blocks, in order, in
// the directory of a database that holds a run, write this week's dated
// file and replace it with --force; its cron line runs the same export
// and holds no % for cron to read as a line break.
func TestRecipeWeeklyCSVRunsAsWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "AU")
	// a span ends at the minute, and the run started in this one
	end := time.Now().UTC().Add(2 * time.Minute)
	h.clockAt(end)
	bin := t.TempDir()
	if err := os.Symlink(ingestBin(t), filepath.Join(bin, "ingest")); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join("..", "..", "docs", "howto", "weekly-csv.md")
	blocks := recipeBlocks(t, page, "sh")
	if len(blocks) < 2 {
		t.Fatalf("%s: %d shell blocks, want the first export and the replacing one", page, len(blocks))
	}
	for i, block := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		cmd := h.bare(ctx)
		cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-e", "-c", block}
		cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("block %d of %s: %v\n%s\n%s", i+1, page, err, block, out)
		}
	}
	// the week's first and last days, of the minute the export ran in
	files, _ := filepath.Glob(filepath.Join(h.dir, "exports", "charts-*_*.csv"))
	if len(files) != 1 {
		t.Fatalf("exports: %v, want one file named by the week's first and last days", files)
	}
	file := files[0]
	minute := end.Truncate(time.Minute)
	if name := filepath.Base(file); name != "charts-"+minute.AddDate(0, 0, -7).Format(time.DateOnly)+"_"+minute.Add(-time.Millisecond).Format(time.DateOnly)+".csv" &&
		name != "charts-"+minute.Add(time.Minute).AddDate(0, 0, -7).Format(time.DateOnly)+"_"+minute.Add(time.Minute-time.Millisecond).Format(time.DateOnly)+".csv" {
		t.Errorf("%s: want the week's first and last days from %s", name, end)
	}
	if got := strings.Count(string(fileBytes(t, file)), "\n"); got < 2 {
		t.Errorf("%s holds %d lines, want the header and the run's rows", file, got)
	}
	crons := recipeBlocks(t, page, "cron")
	if len(crons) != 1 || strings.Contains(crons[0], "%") ||
		!strings.Contains(crons[0], "ingest export --since 1w --out 'exports/charts-{since}_{last}.csv'") {
		t.Errorf("%s: the cron line %q is not the export the page runs, or holds a %%", page, crons)
	}
}
