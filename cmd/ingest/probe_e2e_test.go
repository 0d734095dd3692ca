package main

import (
	"regexp"
	"syscall"
	"testing"
	"time"
)

// The image's one HEALTHCHECK (`ingest probe`, no URL) is healthy for
// serve on its default address and for run --listen alike.
func TestProbeFindsServeAndRunListeners(t *testing.T) {
	t.Parallel()
	df := string(fileBytes(t, "../../Dockerfile"))
	if !regexp.MustCompile(`(?m)^\s+CMD \["/usr/local/bin/ingest", "probe"\]`).MatchString(df) {
		t.Errorf("Dockerfile HEALTHCHECK is not `ingest probe` without a URL:\n%s", df)
	}
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, serveAddr := anyAddr(t)
	_, runAddr := anyAddr(t)
	h.set("INGEST_SERVE_LISTEN", serveAddr)
	h.set("INGEST_RUN_LISTEN", runAddr)
	h.mustRun(1, "probe", "--timeout", "5s") // nothing listens yet
	for _, args := range [][]string{{"serve"}, {"run", "--regions", "US"}} {
		p := h.start(args...)
		if !waitFor(60*time.Second, func() bool { return h.run("probe", "--timeout", "5s").code == 0 }) {
			t.Errorf("ingest probe never healthy while ingest %v runs:\n%s\n%s", args, h.run("probe"), p.out)
		}
		p.signal(t, syscall.SIGTERM)
		p.wait(30 * time.Second)
	}
}
