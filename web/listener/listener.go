package listener

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/ingestworks/ingest"
)

// Start serves h on ln in the background, logging a failure of the
// listener; the func it returns shuts the server down, giving requests
// in flight two seconds.
func Start(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) (shutdown func()) {
	srv := newServer(ln.Addr().String(), h)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", ingest.LogErr, err)
		}
	}()
	log.Debug("listening", "addr", ln.Addr().String())
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}
}

// Listen opens --listen's address. A port another process holds, or an
// address this host does not have, is a setting to change, a ConfigError
// (exit 2), so that a supervisor does not restart into it again and again.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		_, port, _ := net.SplitHostPort(addr)
		return nil, ingest.ConfigErrorf("--listen %s: address already in use: another process holds the port (ss -ltnp 'sport = :%s' names it); stop it or choose another port", addr, port)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, ingest.ConfigErrorf("--listen %s: this host has no such address: listen on one of its own, or on :PORT for every address", addr)
	case errors.Is(err, syscall.EACCES):
		return nil, ingest.ConfigErrorf("--listen %s: a port below 1024 needs a privilege this process lacks: use a port of 1024 or more", addr)
	case err != nil:
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves ui on addr (Listen) until ctx ends, then gives the requests
// in flight five seconds; attrs are what its log lines say of the site.
func Serve(ctx context.Context, addr string, ui http.Handler, log *slog.Logger, attrs ...any) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	srv := newServer(addr, ui)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	url := "http://" + ln.Addr().String() + "/"
	log.Info("serving", append([]any{"url", url}, attrs...)...)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Serve returns as Shutdown begins; the requests in flight end first.
	<-drained
	log.Info("stopped serving: the requests in flight answered", "url", url)
	return nil
}

// newServer returns an http.Server for h with timeouts on every phase
// of a request, so a slow client cannot hold a connection.
func newServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
}
