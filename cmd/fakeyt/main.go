// Command fakeyt serves the project's fake YouTube Data API v3 (package
// fakeyt) for the demo and for manual runs:
//
//	fakeyt --listen 127.0.0.1:0 --latency 0s --addr-file PATH [--move 2s --seed 1]
//	       [--quota-refusal exceeded|daily|search|stats] [--bucket-quota POOL=UNITS,...]
//	       [--bad-key invalid|legacy|blocked|not-configured]
//	       [--fail N --fail-status 500|503|429] [--malformed N] [--date-offset -15m]
//
// With --move, the charts move (fakeyt.Move): every --move of real time is
// an hour of the fake's world, in which new videos enter, ranks change and
// counts grow.
//
// Once listening it writes its base URL ("http://host:port/", what
// --youtube-endpoint takes) to --addr-file, logs one line, and serves until
// SIGINT or SIGTERM. Any non-empty key is accepted unless --keys lists the
// valid ones. Keys are never logged.
//
// The fault flags rehearse, from the command line, what the upstream does
// when it goes wrong (docs/testing.md): each is one of the Fake's hooks.
// GET /_charged answers what the fake has charged so far, per pool (the
// pool names of costs.yaml), all keys together, as JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/regions"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakeyt:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("fakeyt", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	latency := fs.Duration("latency", 0, "delay added to every response")
	addrFile := fs.String("addr-file", "", "write the base URL here once listening")
	keys := fs.String("keys", "", "comma-separated valid API keys (default: any non-empty key)")
	move := fs.Duration("move", 0, "real time per hour of moving charts (0: still charts)")
	seed := fs.Uint64("seed", 1, "the moving charts' seed")
	dateOffset := fs.Duration("date-offset", 0, "move the Date header of every answer by this much (-15m: a caching proxy's old Date)")
	var fl faultFlags
	fl.bind(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Signals are caught before the address is published, so that whoever
	// reads --addr-file may stop us at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	fake := fakeyt.New()
	fake.SetLatency(*latency)
	if *keys != "" {
		fake.AllowKeys(strings.Split(*keys, ",")...)
	}
	if *dateOffset != 0 {
		off := *dateOffset
		fake.SetClock(func() time.Time { return time.Now().Add(off) })
	}
	if *move > 0 {
		fake.Move(*seed, movingClock(time.Now(), *move))
	}
	if err := fl.apply(fake); err != nil {
		ln.Close()
		return err
	}
	base := "http://" + ln.Addr().String() + "/"
	if *addrFile != "" {
		if err := writeAtomic(*addrFile, base); err != nil {
			ln.Close()
			return fmt.Errorf("--addr-file: %w", err)
		}
	}
	slog.Info("fakeyt listening", "endpoint", base, "latency", latency.String(), "regions", len(regions.Builtin))
	return serve(ctx, ln, withCharged(fake))
}

// withCharged serves the fake, and what it charged at /_charged.
func withCharged(fake *fakeyt.Fake) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	mux.HandleFunc("GET /_charged", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(fake.ChargedPools())
	})
	return mux
}

// movingClock runs an hour for every per of real time from start.
func movingClock(start time.Time, per time.Duration) func() time.Time {
	return func() time.Time {
		return start.Add(time.Duration(float64(time.Since(start)) / float64(per) * float64(time.Hour)))
	}
}

// serve runs until ctx is done (SIGINT or SIGTERM), then lets requests in flight finish.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// writeAtomic writes data so that a reader never sees a partial file.
func writeAtomic(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
