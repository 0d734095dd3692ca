package listener

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// Start serves until the func it returns shuts the server down.
func TestStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := Start(context.Background(), ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hi")
	}), slog.New(slog.DiscardHandler))
	url := "http://" + ln.Addr().String() + "/"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hi" {
		t.Errorf("body %q", body)
	}
	stop()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after shutdown")
	}
}

// TestListenOnAPortHeldIsAConfigurationError: a port another process
// holds is a setting to change, named with the way to find the holder.
func TestListenOnAPortHeldIsAConfigurationError(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = Listen(held.Addr().String())
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "ss -ltnp") {
		t.Errorf("Listen on a port held: %v, want a configuration error naming it held", err)
	}
}

// TestServeAnswersUntilItsContextEnds: Serve answers on its address until
// its context ends, then returns with the requests in flight answered.
func TestServeAnswersUntilItsContextEnds(t *testing.T) {
	t.Parallel()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	ctx, cancel := context.WithCancel(context.Background())
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		<-release
		io.WriteString(w, "answered")
	})
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, addr, ui, slog.New(slog.DiscardHandler)) }()
	got := make(chan string, 1)
	go func() {
		for {
			resp, err := http.Get("http://" + addr + "/")
			if err != nil { // not listening yet, or never: Serve said why
				select {
				case err := <-served:
					t.Errorf("Serve ended before it answered: %v", err)
					served <- err
					once.Do(func() { close(arrived) })
					got <- ""
					return
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- string(b)
			return
		}
	}()
	<-arrived
	cancel()
	select { // a Serve that returned now would have dropped the request in flight
	case err := <-served:
		t.Errorf("Serve returned (%v) with a request in flight", err)
		served <- nil
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "answered" {
		t.Errorf("the request in flight at the end got %q, want it answered", body)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil once its context ended", err)
	}
}
