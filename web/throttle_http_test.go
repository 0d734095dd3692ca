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

// TestGlobalWaitSparesKnownAddresses: 12 addresses x 10 wrong tokens put
// every address that has not shown the right token lately under the global
// wait. An address that showed it before the guessing goes on; one never
// seen waits (it might be a guesser's); one of the guessing addresses that
// had shown it waits its own wait, so its right token is not confirmed.
func TestGlobalWaitSparesKnownAddresses(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	srv := throttleServer(t, &now)
	known := newLoopbackClient(t, srv, "127.0.0.50")
	turned := newLoopbackClient(t, srv, "127.0.0.10") // shows the token, then guesses
	for _, c := range []*loopbackClient{known, turned} {
		if code, _, body := c.api(testToken); code != through {
			t.Fatalf("the right token from %s before any guessing: got %d\n%s", c.ip, code, body)
		}
	}
	now = now.Add(10 * time.Minute)
	for a := range 12 {
		c := newLoopbackClient(t, srv, "127.0.0."+strconv.Itoa(10+a))
		for i := range 10 {
			code, _, body := c.api("guess-" + strconv.Itoa(a) + "-" + strconv.Itoa(i) + "-of-a-spread-guess")
			if code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
				t.Fatalf("guess %d from %s: got %d\n%s", i+1, c.ip, code, body)
			}
		}
	}
	stranger := newLoopbackClient(t, srv, "127.0.0.60")
	code, retry, body := stranger.api(testToken)
	if code != http.StatusTooManyRequests || retry == "" || !strings.Contains(body, "has not shown the right token lately") {
		t.Errorf("the right token from a never-seen address during the global wait: got %d Retry-After %q\n%s; want 429 naming the global wait", code, retry, body)
	}
	if code, _, body := known.api(testToken); code != through {
		t.Errorf("the right token from an address that showed it before: got %d, want through (%d)\n%s", code, through, body)
	}
	if code, _, body := turned.api(testToken); code != http.StatusTooManyRequests || !strings.Contains(body, "from this address") {
		t.Errorf("the right token from a known address that guessed: got %d, want 429 from this address\n%s", code, body)
	}
}
