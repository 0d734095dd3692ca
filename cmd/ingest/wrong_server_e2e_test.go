package main

// A URL answered by another server than the one it names (a port typo
// onto an HTTP server, PostgreSQL on the Redis URL, Redis on the
// database's) is a configuration error: exit 2 naming the variable and
// what answered, before anything is spent. A server that does not answer
// stays an outage (redis_outage_e2e_test.go, quota_e2e_test.go's hung
// Redis, database_errors_e2e_test.go's unreachable PostgreSQL).

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// wrongServers are servers of other protocols than Redis's and
// PostgreSQL's, by what a message names them: an HTTP server, and one
// that writes garbage to whoever connects.
func wrongServers(t *testing.T) map[string]string {
	t.Helper()
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("\x00\x17garbage, not a reply\r\n"))
			c.Close()
		}
	}()
	return map[string]string{web.Listener.Addr().String(): "answered as HTTP", ln.Addr().String(): "answered in a protocol"}
}

// wrongServerCommands are the commands that open the limiter or the
// database: each refuses a wrong server the same way.
var wrongServerCommands = [][]string{
	{"run", "--once", "--regions", "US"},
	{"run", "--every", "1h", "--regions", "US"},
	{"report"},
	{"check"},
}

// refusedAsWrong runs every command and wants exit 2 with the message
// naming variable and what answered, no password, and nothing charged.
func refusedAsWrong(t *testing.T, h *harness, variable, addr, answered, password string) {
	t.Helper()
	for _, args := range wrongServerCommands {
		res := h.run(args...)
		want := variable + ": the server at " + addr + " " + answered
		if variable == "INGEST_DB" {
			want = "reaches a server at " + addr + " that " + answered
		}
		if res.code != 2 || !strings.Contains(res.stdout+res.stderr, want) || !strings.Contains(res.stdout+res.stderr, variable) {
			t.Errorf("want exit 2 saying %q, got %s", want, res)
		}
		if strings.Contains(res.stdout+res.stderr, password) {
			t.Errorf("the password is printed:\n%s", res)
		}
	}
	if got := h.fake.Charged(testKey); got != 0 {
		t.Errorf("the upstream was charged %d units while %s named a wrong server, want 0", got, variable)
	}
}

func TestRedisURLAnsweredByAnotherServerIsAConfigurationError(t *testing.T) {
	t.Parallel()
	servers := wrongServers(t)
	pg, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	servers[pg.Host] = "answered as PostgreSQL, not Redis"
	const password = "redis-Sekret-4321"
	for addr, answered := range servers {
		t.Run(answered, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.set("REDIS_URL", "redis://:"+password+"@"+addr+"/0")
			h.noApply()
			refusedAsWrong(t, h, "REDIS_URL", addr, answered, password)
		})
	}
}

func TestDatabaseURLAnsweredByAnotherServerIsAConfigurationError(t *testing.T) {
	t.Parallel()
	servers := wrongServers(t)
	rs := redistest.Start(t)
	servers[rs.Addr] = "answered as Redis, not PostgreSQL"
	for addr, answered := range servers {
		t.Run(answered, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.set("INGEST_DB", "postgres://ingest:"+pgPassword+"@"+addr+"/ingest")
			refusedAsWrong(t, h, "INGEST_DB", addr, answered, pgPassword)
		})
	}
}
