package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The published half of the edge lab (make edge): the daemon landing
// runs of twenty regions' top 50 against a moving fake and publishing the
// readers' site after each landing (run --publish), Debian's nginx on the
// shipped server block serving the directory, and a flood of readers
// over it for the flood's length. A reader never gets an error for a
// page that was published, never half a file, never a page that links a
// file not there (a torn read), and each landing reaches the directory
// before the same chart's next pass.

// publishedRegions are the charts the published lab's daemon runs.
var publishedRegions = []string{"US", "GB", "IN", "BR", "JP", "DE", "FR", "CA", "AU", "MX",
	"KR", "ES", "IT", "NL", "SE", "PL", "TR", "ID", "TH", "VN"}

// publishedTally is what the readers of the directory saw.
type publishedTally struct {
	mu                  sync.Mutex
	asks, errors, torn  int64
	linksChecked        int64
	firstErr, firstTorn string
	late                []time.Duration // each landing's wait from the origin to the directory
	missedLandings      int64
}

func (p *publishedTally) fail(torn bool, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if torn {
		p.torn++
		if p.firstTorn == "" {
			p.firstTorn = what
		}
		return
	}
	p.errors++
	if p.firstErr == "" {
		p.firstErr = what
	}
}

// pageLinks are the site's own paths an HTML page links (href and src),
// without their queries; the search, which a directory does not answer,
// left out.
var pageLink = regexp.MustCompile(`(?:href|src)="(?:https://charts\.example\.org)?(/[^"#?]*)`)

func pageLinks(body string) []string {
	var out []string
	for _, m := range pageLink.FindAllStringSubmatch(body, -1) {
		p := m[1]
		if strings.HasPrefix(p, "//") || p == "/search" || strings.HasPrefix(p, "/search/") {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// whole says a published file's body is all of it: an HTML page to its
// end, a JSON document that parses, a feed or sitemap that parses.
func whole(ctype, body string) bool {
	switch {
	case strings.HasPrefix(ctype, "text/html"):
		return strings.HasSuffix(strings.TrimSpace(body), "</html>")
	case strings.HasPrefix(ctype, "application/json"):
		return json.Valid([]byte(body))
	case strings.Contains(ctype, "xml"):
		d := xml.NewDecoder(strings.NewReader(body))
		for {
			if _, err := d.Token(); err == io.EOF {
				return true
			} else if err != nil {
				return false
			}
		}
	}
	return true
}

// startNginxOn serves dir with the shipped server block on addr.
func startNginxOn(t *testing.T, addr, dir string) {
	t.Helper()
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if nginx, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (make deps installs Debian's nginx)")
		}
	}
	conf, err := os.ReadFile("../../deploy/nginx/ingest-published.conf")
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "nginx")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	server := strings.NewReplacer("root /srv/ingest/site;", "root "+dir+";", "listen 8080;", "listen "+addr+";",
		"listen [::]:8080;", "").Replace(string(conf))
	main := fmt.Sprintf(`daemon off; pid %[1]s/nginx.pid; error_log %[1]s/error.log; worker_processes 2;
events {}
http { include /etc/nginx/mime.types; default_type application/octet-stream; access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  %[2]s }
`, run, server)
	if err := os.WriteFile(filepath.Join(run, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-p", run, "-c", filepath.Join(run, "nginx.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	if !waitFor(10*time.Second, func() bool { _, err := http.Get("http://" + addr + "/"); return err == nil }) {
		errLog, _ := os.ReadFile(filepath.Join(run, "error.log"))
		t.Fatalf("nginx never answered on %s\n%s", addr, errLog)
	}
}

func TestEdgePublished(t *testing.T) {
	if os.Getenv("INGEST_EDGE") == "" {
		t.Skip("the edge lab runs in make edge (INGEST_EDGE=1): nginx over a directory the daemon publishes, under a flood, for minutes")
	}
	floodFor, _ := edgeSettings(t)
	total := floodFor + 10*time.Minute
	h := newHarness(t)
	h.tightCosts(1_000_000)
	h.fake.Move(20261128, time.Now)
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	// nginx's workers read as nobody: the directories on the way open.
	for d := h.dir; d != "/" && d != "/tmp"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	site := filepath.Join(h.dir, "site")
	origin := closedAddr(t)
	specs := make([]string, len(publishedRegions))
	for i, r := range publishedRegions {
		specs[i] = r + ":depth=50"
	}
	daemon := h.startFor(total, "run", "--regions", strings.Join(specs, ","), "--every", "1m",
		"--listen", origin, "--publish", site)
	nginxAddr := closedAddr(t)
	if !waitFor(10*time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(site, "worldwide", "index.html"))
		return err == nil
	}) {
		t.Fatalf("the daemon published nothing in 10 minutes:\n%s", daemon.out)
	}
	startNginxOn(t, nginxAddr, site)

	// The paths the flood reads: the pages the readers' site leads to.
	var paths []string
	if !waitFor(10*time.Minute, func() bool {
		paths = readerPaths(t, nginxAddr)
		return len(landedRegions(paths)) >= 8
	}) {
		t.Fatalf("fewer than 8 charts were published in 10 minutes:\n%s", daemon.out)
	}
	// A publish that brings the site's first charts writes a new chart's
	// videos before its page (doc.go): the flood starts from the publish
	// after the one that brought the charts it reads.
	seen := len(publishedLines(daemon.out.String()))
	if !waitFor(5*time.Minute, func() bool { return len(publishedLines(daemon.out.String())) > seen }) {
		t.Fatalf("no publish after the charts the flood reads were there:\n%s", daemon.out)
	}
	t.Logf("the flood reads %d published paths", len(paths))

	tally := &publishedTally{}
	z := newZipf(len(paths))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var pagesRead atomic.Int64
	var published sync.Map // the paths answered 200 once
	for w := range 12 {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			read := func(path string) (int, string, string, error) {
				res, err := client.Get("http://" + nginxAddr + path)
				if err != nil {
					return 0, "", "", err
				}
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				return res.StatusCode, res.Header.Get("Content-Type"), string(b), err
			}
			for n := uint64(w); ; n += 12 {
				select {
				case <-stop:
					return
				default:
				}
				path := paths[z.draw(float64((n*2654435761)%1_000_003)/1_000_003)]
				status, ctype, body, err := read(path)
				tally.mu.Lock()
				tally.asks++
				tally.mu.Unlock()
				if err != nil || status != http.StatusOK {
					// A path the flood was given before its first publish
					// was whole (its JSON came first) is not yet an error.
					if _, before := published.Load(path); before || err != nil {
						tally.fail(false, fmt.Sprintf("%s: %d %v at %s", path, status, err, time.Now().UTC().Format("15:04:05.000")))
					}
					continue
				}
				published.Store(path, true)
				if !whole(ctype, body) {
					tally.fail(true, fmt.Sprintf("%s: half a file (%d bytes of %s)", path, len(body), ctype))
					continue
				}
				// One page in ten: every file it links is there. A link
				// answered 404 is torn only if the page as served now
				// still links it (a page replaced since may have dropped
				// it, and the publish removes a file no page links).
				if !strings.HasPrefix(ctype, "text/html") || pagesRead.Add(1)%10 != 0 {
					continue
				}
				for _, link := range pageLinks(body) {
					tally.mu.Lock()
					tally.linksChecked++
					tally.mu.Unlock()
					ls, _, _, err := read(link)
					if err == nil && ls == http.StatusOK {
						continue
					}
					if _, _, now, err2 := read(path); err2 == nil && slices.Contains(pageLinks(now), link) {
						if ls2, _, _, err3 := read(link); err3 != nil || ls2 != http.StatusOK {
							tally.fail(true, fmt.Sprintf("%s links %s, which answers %d %v at %s", path, link, ls2, err3, time.Now().UTC().Format("15:04:05.000")))
						}
					}
				}
			}
		})
	}

	// Freshness: each run the daemon's own site shows reaches the
	// directory, and before the chart's next run does.
	wg.Go(func() {
		client := &http.Client{Timeout: 10 * time.Second}
		runOf := func(addr, region string) int64 {
			res, err := client.Get("http://" + addr + "/api/v1/charts/" + region)
			if err != nil {
				return 0
			}
			defer res.Body.Close()
			var c struct {
				RunID int64 `json:"run_id"`
			}
			if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&c) != nil {
				return 0
			}
			return c.RunID
		}
		landed := map[string]int64{}
		since := map[string]time.Time{}
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			for _, region := range publishedRegions {
				at := runOf(origin, region)
				if at == 0 {
					continue
				}
				if at != landed[region] {
					if _, waiting := since[region]; waiting && landed[region] != 0 {
						tally.mu.Lock()
						tally.missedLandings++
						tally.mu.Unlock()
					}
					landed[region], since[region] = at, time.Now()
				}
				start, waiting := since[region]
				if waiting && runOf(nginxAddr, region) >= at {
					tally.mu.Lock()
					tally.late = append(tally.late, time.Since(start))
					tally.mu.Unlock()
					delete(since, region)
				}
			}
		}
	})

	time.Sleep(floodFor)
	close(stop)
	wg.Wait()

	tally.mu.Lock()
	defer tally.mu.Unlock()
	slices.Sort(tally.late)
	t.Logf("readers: %d asks of the directory, %d errors, %d torn (%d links checked); landings: %d reached it, %d were passed by the next run before they did",
		tally.asks, tally.errors, tally.torn, tally.linksChecked, len(tally.late), tally.missedLandings)
	if n := len(tally.late); n > 0 {
		t.Logf("a landing's wait from the daemon's site to the directory: p50 %s, p90 %s, slowest %s",
			tally.late[n/2].Round(time.Millisecond), tally.late[n*9/10].Round(time.Millisecond), tally.late[n-1].Round(time.Millisecond))
	}
	if lines := publishedLines(daemon.out.String()); len(lines) > 0 {
		t.Logf("the daemon's publishes: %d; the last: %s", len(lines), lines[len(lines)-1])
	}
	if tally.errors > 0 {
		t.Errorf("%d asks of a published page failed; the first: %s", tally.errors, tally.firstErr)
	}
	if tally.torn > 0 {
		t.Errorf("%d torn reads; the first: %s", tally.torn, tally.firstTorn)
	}
	if t.Failed() {
		for _, l := range publishedLines(daemon.out.String()) {
			t.Log(l)
		}
		for _, l := range strings.Split(daemon.out.String(), "\n") {
			if strings.Contains(l, "publish") && !strings.Contains(l, "msg=published") {
				t.Log(l)
			}
		}
	}
	if len(tally.late) == 0 {
		t.Errorf("no landing reached the directory during the flood:\n%s", daemon.out)
	}
	if tally.missedLandings > 0 {
		t.Errorf("%d landings were passed by the chart's next run before they reached the directory", tally.missedLandings)
	}
}

// publishedLines are the daemon's log lines of the publishes it wrote.
func publishedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "msg=published") {
			lines = append(lines, l)
		}
	}
	return lines
}
