package web

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loopbackClient sends its requests from the loopback address ip (all of
// 127.0.0.0/8 is local on Linux), so that one test plays many clients'
// addresses over real HTTP.
type loopbackClient struct {
	t    *testing.T
	ip   string
	base string
	c    *http.Client
}

func newLoopbackClient(t *testing.T, srv *httptest.Server, ip string) *loopbackClient {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &loopbackClient{t: t, ip: ip, base: srv.URL, c: &http.Client{Transport: tr}}
}

// api asks an API route with tok as the bearer and returns the status, the
// Retry-After and the body.
func (c *loopbackClient) api(tok string) (int, string, string) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/api/v1/nothing", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := c.c.Do(req)
	if err != nil {
		c.t.Fatalf("from %s: %v", c.ip, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Retry-After"), string(b)
}

// throttleServer is a server that asks for testToken, on a clock the test
// moves, over real HTTP on loopback.
func throttleServer(t *testing.T, now *time.Time) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(authServer(t, now))
	t.Cleanup(srv.Close)
	return srv
}

// through is the status of a request the access token let through: the
// API's 404 for a route it does not have.
const through = http.StatusNotFound

// TestWrongTokensBehindOneAddressSpareTheOthers is the shared NAT, or one
// script with an old token: ten wrong tokens from one address make that
// address wait (its right token too: it is not compared), and the right
// token from any other address passes.
func TestWrongTokensBehindOneAddressSpareTheOthers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	srv := throttleServer(t, &now)
	nat, other := newLoopbackClient(t, srv, "127.0.0.2"), newLoopbackClient(t, srv, "127.0.0.3")
	for i := range 10 {
		if code, _, body := nat.api("an-old-token-of-a-script-" + strconv.Itoa(i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d from the NAT: got %d, want 401\n%s", i+1, code, body)
		}
	}
	code, retry, body := nat.api(testToken)
	if code != http.StatusTooManyRequests || retry != "60" || !strings.Contains(body, "from this address") {
		t.Errorf("the right token from the NAT while it waits: got %d Retry-After %q\n%s; want 429, 60, from this address", code, retry, body)
	}
	if code, _, body := other.api(testToken); code != through {
		t.Errorf("the right token from another address: got %d, want through (%d)\n%s", code, through, body)
	}
}

// TestRightTokenAlwaysOpens: wrong tokens from 200 addresses, each past
// its own limit, hold back those addresses alone: the right token from a
// never-seen address is served at once, as from one that showed it
// before; an address that guessed waits its own wait, its right token
// not compared; after a restart every address is served.
func TestRightTokenAlwaysOpens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	known := newLoopbackClient(t, srv, "127.0.1.1")
	if code, _, body := known.api(testToken); code != through {
		t.Fatalf("the right token before any guessing: got %d\n%s", code, body)
	}
	var guessers []*loopbackClient
	for a := range 200 {
		c := newLoopbackClient(t, srv, "127.0.2."+strconv.Itoa(a+1))
		guessers = append(guessers, c)
		for i := range 11 {
			code, _, body := c.api("guess-" + strconv.Itoa(a) + "-" + strconv.Itoa(i) + "-of-a-spread-guess")
			if want := map[bool]int{true: http.StatusTooManyRequests, false: http.StatusUnauthorized}[i == 10]; code != want {
				t.Fatalf("guess %d from %s: got %d, want %d\n%s", i+1, c.ip, code, want, body)
			}
		}
		c.c.CloseIdleConnections()
	}
	for i, c := range []*loopbackClient{newLoopbackClient(t, srv, "127.0.3.1"), known, newLoopbackClient(t, srv, "127.0.3.2")} {
		if code, retry, body := c.api(testToken); code != through {
			t.Errorf("the right token from %s (%d) during the guessing: got %d Retry-After %q, want through (%d)\n%s", c.ip, i, code, retry, through, body)
		}
	}
	if code, _, body := guessers[0].api(testToken); code != http.StatusTooManyRequests || !strings.Contains(body, "from this address") {
		t.Errorf("the right token from an address that guessed: got %d, want 429 from this address\n%s", code, body)
	}

	restarted := httptest.NewServer(authServer(t, &now))
	t.Cleanup(restarted.Close)
	for _, ip := range []string{"127.0.2.1", "127.0.3.3"} {
		if code, _, body := newLoopbackClient(t, restarted, ip).api(testToken); code != through {
			t.Errorf("the right token from %s after a restart: got %d, want through\n%s", ip, code, body)
		}
	}
}
