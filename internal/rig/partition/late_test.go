package partition

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// A call the worker gave up on never reaches the upstream afterwards: a
// request held in the host's socket by a cut link, when the worker stops
// at once, is dropped, not sent once the link is back (docs/explanation/quota.md, "A
// call's delivery"). The link is cut once the host's kernel holds the
// chart's first page whole (the host stopped meanwhile), so that the next
// page's request is what the cut holds.
func TestAGivenUpCallNeverReachesTheUpstream(t *testing.T) {
	l := newLab(t, 230)
	dir := t.TempDir()
	bin := build(t, dir)
	upIP := l.add("up", 2)
	l.add("h", 11)

	fake := fakeyt.New()
	const key = "late-key"
	first, answer, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var pages []string // the chart pages the upstream took, by page token
	ln, err := l.listen("up", upIP+":8080")
	if err != nil {
		t.Fatalf("listen in the upstream's namespace: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/videos") {
			fake.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		pages = append(pages, r.URL.Query().Get("pageToken"))
		n := len(pages)
		mu.Unlock()
		if n > 1 {
			fake.ServeHTTP(w, r)
			return
		}
		// The first page: answered whole (its length given, flushed)
		// while the host is stopped, so that its kernel takes the answer
		// and the host sends nothing until the test lets it go on.
		close(first)
		<-answer
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		w.(http.Flusher).Flush()
		close(answered)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	run := l.command("h", bin, "run", "--once", "--regions", "NL")
	run.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "YOUTUBE_ENDPOINT=http://" + upIP + ":8080/",
		"YOUTUBE_API_KEY=" + key, "INGEST_DB=" + filepath.Join(dir, "h.db")}
	logf, _ := os.Create(filepath.Join(dir, "h.log"))
	defer logf.Close()
	run.Stdout, run.Stderr = logf, logf
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { run.Wait(); close(done) }()
	t.Cleanup(func() { run.Process.Signal(syscall.SIGCONT); run.Process.Kill(); <-done })

	select {
	case <-first:
	case <-done:
		log, _ := os.ReadFile(filepath.Join(dir, "h.log"))
		t.Fatalf("the run ended before it asked for a chart page:\n%s", log)
	}
	hNS := l.ns("h")
	// queued is what the sockets of ns to or from the upstream's port
	// hold that the other end has not acknowledged, and their states:
	// the kernel's, read as it changes (nothing signals it).
	queued := func(ns, filter string) (n int, states []string) {
		out, _ := exec.Command("ip", "netns", "exec", ns, "ss", "-Htn", "state", "all", filter, upIP+":8080").Output()
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			if f[0] == "TIME-WAIT" || f[0] == "LISTEN" {
				continue // an earlier call's connection, closed; the listener
			}
			q, _ := strconv.Atoi(f[2])
			n += q
			states = append(states, f[0]+" send-q "+f[2])
		}
		return n, states
	}
	await := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, "h.log"))
				t.Fatalf("%s: not within a minute; the host's log:\n%s", what, log)
			}
		}
	}
	run.Process.Signal(syscall.SIGSTOP)
	close(answer)
	<-answered
	await("the host's kernel takes the first page whole", func() bool { n, _ := queued(l.ns("up"), "src"); return n == 0 })
	l.cut("h", "up")
	run.Process.Signal(syscall.SIGCONT)

	// The second page's request is in the host's socket once its send
	// queue holds bytes the upstream has not acknowledged: the kernel's
	// state, read as it changes (nothing signals it).
	await("the second page's request is held in the host's socket", func() bool { n, _ := queued(hNS, "dst"); return n > 0 })

	// The operator stops it at once: two signals.
	run.Process.Signal(syscall.SIGTERM)
	run.Process.Signal(syscall.SIGTERM)
	<-done
	n, states := queued(hNS, "dst")
	if n > 0 {
		t.Errorf("after the worker gave up and exited, its host still holds %d bytes for the upstream, to be sent once the link is back: %v", n, states)
	}

	// The link is back: whatever the host still held goes out, and the
	// socket that held it goes once the upstream has answered it (an
	// answer to a closed socket is refused with a reset).
	l.heal("h", "up")
	await("the host's sockets to the upstream end", func() bool { _, states := queued(hNS, "dst"); return len(states) == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(pages) != 1 || fake.ChargedByOp(key)[ingest.OpVideosList] != 1 {
		t.Errorf("the upstream took %d chart pages (%q) and charged %d: want the first alone, the second given up on before it arrived",
			len(pages), pages, fake.ChargedByOp(key)[ingest.OpVideosList])
	}
}
