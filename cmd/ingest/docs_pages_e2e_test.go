package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeytBuild is cmd/fakeyt, which the tutorial starts itself.
var fakeytBuild = &build{pkg: "../fakeyt", name: "fakeyt"}

// docsDir is the repository's docs/, from this package.
var docsDir = filepath.Join("..", "..", "docs")

// testedElsewhere are the recipes a test of their own runs, by the
// test's name.
var testedElsewhere = map[string]string{"weekly-csv.md": "TestRecipeWeeklyCSVRunsAsWritten"}

// spanExports are the recipes that export a span back from now, which
// ends at the current minute: run minutes after the charts were fetched,
// as a reader runs them, with the house clock moved on, so that the runs
// the test just made are in the span and not the next one's.
var spanExports = map[string]bool{"duckdb-pandas.md": true}

// skipMarker, on the line before a fenced block, keeps the test from
// running it, saying why: a real key, root, systemd, a server the test
// does not start.
var skipMarker = regexp.MustCompile(`^<!-- docs-test: skip: (\S.*\S) -->$`)

// shellBlock is one ```sh block of a page: where it starts, its text and,
// when the page marks it, why it is not run.
type shellBlock struct {
	line       int
	text, skip string
}

func shellBlocks(t *testing.T, page string) []shellBlock {
	t.Helper()
	var out []shellBlock
	var cur *shellBlock
	prev := ""
	for i, line := range strings.Split(string(fileBytes(t, page)), "\n") {
		switch {
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case line == "```sh":
			cur = &shellBlock{line: i + 1}
			if m := skipMarker.FindStringSubmatch(prev); m != nil {
				cur.skip = m[1]
			}
		case strings.HasPrefix(line, "<!-- docs-test") && !skipMarker.MatchString(line):
			t.Errorf("%s:%d: %q is not a skip marker (<!-- docs-test: skip: REASON -->)", page, i+1, line)
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return out
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:(\d{4,5})\b`)

// freePorts gives each loopback port the text names a free one of this
// machine, wherever the number stands (a server's own port argument
// too): the one change the test makes to a page's commands, since a fixed
// port reads better on the page and the tests run side by side.
func freePorts(t *testing.T, text string) string {
	t.Helper()
	for _, m := range loopbackPort.FindAllStringSubmatch(text, -1) {
		port := m[1]
		if !strings.Contains(text, "127.0.0.1:"+port) {
			continue // given its free one already
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		free := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		text = regexp.MustCompile(`\b`+port+`\b`).ReplaceAllString(text, free)
	}
	return text
}

// runPage runs the page's shell blocks in order as one script in dir, so
// that what a block exports or starts the next one has, as in a
// terminal; a failure names the block. It returns how many blocks ran and
// how many the page marks not to. Whatever the blocks left running is
// stopped with them.
func runPage(t *testing.T, page, dir string, env []string) (ran, skipped int) {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, b := range shellBlocks(t, page) {
		if b.skip != "" {
			t.Logf("%s:%d: not run: %s", page, b.line, b.skip)
			skipped++
			continue
		}
		fmt.Fprintf(&script, "echo '>>> %s:%d' >&2\n%s", page, b.line, b.text)
		ran++
	}
	if ran == 0 {
		t.Fatalf("%s: no shell block the test runs", page)
	}
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil && strings.Contains(script.String(), tool+" ") {
			t.Skipf("%s runs %s, which this machine lacks: install it to run the page", page, tool)
		}
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(context.Background(), longTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", freePorts(t, script.String()))
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Start()
	if err == nil {
		defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = cmd.Wait()
	}
	if err != nil {
		out, _ := os.ReadFile(log.Name())
		block := "before its first block"
		if i := strings.LastIndex(string(out), ">>> "); i >= 0 {
			block, _, _ = strings.Cut(string(out[i+4:]), "\n")
		}
		t.Fatalf("%s: the block at %s failed: %v\n%s", page, block, err, out)
	}
	return ran, skipped
}

// pathWith is a PATH whose first directory holds ingest and fakeyt, as
// `make install` would put them, and the directory.
func pathWith(t *testing.T) (path, bin string) {
	t.Helper()
	bin = t.TempDir()
	for name, target := range map[string]string{"ingest": ingestBin(t), "fakeyt": fakeytBuild.get(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin + ":" + os.Getenv("PATH"), bin
}

// The tutorial runs as written from an empty directory holding bin/, as
// `make build` leaves a clone: its commands start the fake upstream,
// fetch, search, export, run a daemon and publish, and leave what it
// promises a newcomer: this week's CSV and a site of pages to share.
func TestTutorialRunsAsWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, bin := pathWith(t)
	if err := os.Symlink(bin, filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(docsDir, "tutorial.md")
	ran, skipped := runPage(t, page, dir, scratchEnv("PATH="+path, "HOME="+os.Getenv("HOME")))
	t.Logf("%s: %d blocks run, %d not run", page, ran, skipped)
	csvs, _ := filepath.Glob(filepath.Join(dir, "exports", "charts-*.csv"))
	if len(csvs) != 1 || strings.Count(string(fileBytes(t, csvs[0])), "\n") < 2 {
		t.Errorf("after the tutorial: want one weekly CSV with rows in exports/, got %v", csvs)
	}
	for _, f := range []string{"index.html", "charts/JP/index.html", "sitemap.xml"} {
		if _, err := os.Stat(filepath.Join(dir, "site", f)); err != nil {
			t.Errorf("after the tutorial, the site to share: %v", err)
		}
	}
}

// Every how-to recipe runs as written, its shell blocks in order, in the
// directory of a database that holds a run of three charts, with a key
// and the fake upstream in the environment, as the recipes assume; a
// block the page marks (a real key, root, a server) is not run and is
// counted. A recipe another test runs is named in testedElsewhere.
func TestRecipesRunAsWritten(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join(docsDir, "howto", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 6 {
		t.Fatalf("found %d recipes in docs/howto: the glob missed them", len(pages))
	}
	for _, page := range pages {
		if _, ok := testedElsewhere[filepath.Base(page)]; ok {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.mustRun(0, "run", "--once", "--regions", "US,GB,JP")
			if spanExports[filepath.Base(page)] {
				h.clockAt(time.Now().Add(2 * time.Minute))
			}
			path, _ := pathWith(t)
			env := scratchEnv("PATH="+path, "HOME="+os.Getenv("HOME"))
			for k, v := range h.env {
				env = append(env, k+"="+v)
			}
			ran, skipped := runPage(t, page, h.dir, env)
			t.Logf("%s: %d blocks run, %d not run", page, ran, skipped)
		})
	}
}
