package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
)

// A forwarded call goes out with the operator's key, never the caller's;
// an upstream that echoes the request it refused hands back no key, and
// none of the upstream's hop or cookie headers.
func TestForwardSendsTheKeyAndHandsBackNone(t *testing.T) {
	var got url.Values
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Header().Set("Set-Cookie", "s=1")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"code":400,"message":"bad request ` + r.URL.String() + `","errors":[{"reason":"badRequest","message":"x"}]}}`))
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, func(o *fetch.Options) { o.Endpoint = up.URL + "/" })
	ans, err := e.client.Forward(context.Background(), e.gate.Gate, ingest.OpVideosList,
		url.Values{"part": {"id"}, "key": {"ingest_the_clients_token"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Get("key") != key || got.Get("part") != "id" {
		t.Errorf("the upstream got key %q part %q, want the operator's key and the client's part", got.Get("key"), got.Get("part"))
	}
	e.noKey(t, "the answer's body", string(ans.Body))
	if ans.Status != http.StatusBadRequest || ans.Err == nil {
		t.Errorf("the answer: HTTP %d, err %v; want 400 and its reading", ans.Status, ans.Err)
	}
	if ans.Header.Get("Set-Cookie") != "" || ans.Header.Get("Connection") != "" {
		t.Errorf("the answer keeps headers it must not: %v", ans.Header)
	}
	if e.gate.calls() != 1 {
		t.Errorf("the gate was asked %d times, want once", e.gate.calls())
	}
}

// A call that never reached the upstream (nothing listens) is given back;
// a refusal of the gate sends nothing.
func TestForwardGivesBackWhatNeverLeft(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := newEnv(t, func(o *fetch.Options) { o.Endpoint = "http://" + addr + "/" })
	if _, err := e.client.Forward(context.Background(), e.gate.Gate, ingest.OpVideosList, url.Values{}); err == nil {
		t.Fatal("a call to nobody: no error")
	}
	if len(e.gate.givenBack) != 1 {
		t.Errorf("given back %v, want the one attempt", e.gate.givenBack)
	}
	refused := &ingest.RefusedError{}
	e.gate.refuse = func(int, string) error { return refused }
	if _, err := e.client.Forward(context.Background(), e.gate.Gate, ingest.OpVideosList, url.Values{}); !errors.Is(err, refused) {
		t.Errorf("a refused call: %v, want the gate's refusal", err)
	}
}
