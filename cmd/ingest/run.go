package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

type runFlags struct {
	once    bool
	regions string
	every   time.Duration
	listen  string
}

func newRunCmd(s *settings) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Ingest the regions' most-popular charts, as a daemon or once",
		Long: `run fetches each region's most-popular chart to the end and stores it.

As a daemon it runs every --every, in UTC, region i offset by i x every/8, so
that the eight regions spread their spending over the period; a region whose
latest slot passed while the daemon was down runs once at start. With --once
it runs every selected region now, one after another, and exits: the form for
system cron or a Kubernetes CronJob.

When the limiter says no, a pass stops cleanly and says when it could go on;
that is not a failure (exit 0), so a CronJob does not retry into an exhausted
quota. SIGINT or SIGTERM: no new runs; the page in flight is stored; exit 0.
A second signal stops at once.`,
		Example: `  YOUTUBE_API_KEY=... ingest run --once --regions US,GB
  YOUTUBE_API_KEY=... REDIS_URL=redis://localhost:6379/0 ingest run --every 1h --listen :9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd.Context(), s, f) },
	}
	cmd.Flags().BoolVar(&f.once, "once", false, "run every selected region now, one after another, then exit")
	cmd.Flags().StringVar(&f.regions, "regions", "", "comma-separated ISO 3166-1 alpha-2 codes (default US,GB,DE,FR,IN,BR,AU,CA)")
	cmd.Flags().DurationVar(&f.every, "every", time.Hour, "schedule period, at least 1m; region i runs at offset i x every/8")
	cmd.Flags().StringVar(&f.listen, "listen", "", "serve /metrics, /healthz and /quota on this address (host:port)")
	return cmd
}

func (f *runFlags) validate() ([]string, error) {
	codes, err := regions.Parse(f.regions)
	if err != nil {
		return nil, usageErrorf("--regions: %w", err)
	}
	if f.every < regions.MinEvery {
		return nil, usageErrorf("--every: must be at least %s, got %s", regions.MinEvery, f.every)
	}
	if f.listen != "" {
		if _, _, err := net.SplitHostPort(f.listen); err != nil {
			return nil, usageErrorf("--listen: want host:port or :port, got %q", f.listen)
		}
	}
	return codes, nil
}

// pipeline is everything a command that calls the upstream opens, closed
// in reverse order.
type pipeline struct {
	quotaKey string
	db       *store.DB
	limiter  limiter
	source   *fetch.Client
	closers  []func()
}

func (p *pipeline) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// openPipeline checks the key first (a usage error before anything is
// written), then opens the database, the limiter and the client.
func openPipeline(ctx context.Context, s *settings) (*pipeline, error) {
	key, err := apiKey()
	if err != nil {
		return nil, err
	}
	p := &pipeline{quotaKey: s.resolveQuotaKey(key)}
	if p.db, err = s.openStore(ctx); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { p.db.Close() })
	l, closeLimiter, err := s.openLimiter(p.db, p.quotaKey)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.limiter = l
	p.closers = append(p.closers, closeLimiter)
	if err := agree(ctx, l, s.logger); err != nil {
		p.Close()
		return nil, err
	}
	if r, ok := l.(*quota.Redis); ok {
		// Heartbeats keep this worker's copy of the register fresh, so that
		// it can vouch for who spent if Redis loses data, and notice such
		// a loss within seconds.
		beat, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); r.Run(beat) }()
		p.closers = append(p.closers, func() { stop(); <-done })
	}
	p.source, err = fetch.New(ctx, fetch.Options{Endpoint: s.endpoint, APIKey: key, Logger: s.logger})
	if err != nil {
		p.Close()
		return nil, usageErrorf("--youtube-endpoint: %w", err)
	}
	return p, nil
}

// agree checks, before anything is spent, that the limiter holds the same
// pools as this costs file: a disagreement is a configuration error.
// When the limiter cannot be asked, each call meets the same check (or the
// fail policy) later.
func agree(ctx context.Context, l limiter, log *slog.Logger) error {
	err := l.CheckConfig(ctx)
	var cerr *quota.ConfigError
	switch {
	case errors.As(err, &cerr):
		return usageErrorf("--costs: %w", err)
	case err != nil:
		log.Warn("could not check the limiter's configuration before starting", "err", err)
	}
	return nil
}

func runRun(ctx context.Context, s *settings, f *runFlags) error {
	codes, err := f.validate()
	if err != nil {
		return err
	}
	p, err := openPipeline(ctx, s)
	if err != nil {
		return err
	}
	defer p.Close()
	m := newMetrics()
	runner := &regions.Runner{Locker: p.limiter, Logger: s.logger, Observe: m.observe}
	lim := &meteredLimiter{next: p.limiter, m: m}
	for _, code := range codes {
		runner.Passes = append(runner.Passes, &regions.Pass{Region: code, QuotaKey: p.quotaKey,
			Costs: s.costs, Limiter: lim, Source: p.source, Sink: p.db,
			Logger: s.logger.With("region", code)})
	}
	ctx, drain, stop := signals(ctx, s)
	defer stop()
	if f.listen != "" {
		shutdown, err := serve(ctx, s, f.listen, m, p, codes, f.every)
		if err != nil {
			return err
		}
		defer shutdown()
	}
	if f.once {
		return onceExit(runner.Once(ctx, drain))
	}
	last, err := p.db.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return runtimeError(fmt.Errorf("read last runs: %w", err))
	}
	for i, code := range codes {
		m.schedules[code], _ = regions.Stagger(f.every, i, len(codes))
	}
	starts := map[string]time.Time{}
	for code, r := range last {
		starts[code] = r.Started
	}
	s.logger.Info("daemon started", "regions", len(codes), "every", f.every.String(), "backend", p.limiter.Backend())
	return runtimeError(runner.Daemon(ctx, drain, f.every, starts))
}

// onceExit: 0 when every pass completed or stopped cleanly, 1 when any
// failed.
func onceExit(results []regions.Result) error {
	var failed []string
	for _, r := range results {
		if r.Status == ingest.StatusFailed {
			failed = append(failed, fmt.Sprintf("%s: %v", r.Region, r.Err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return runtimeError(fmt.Errorf("%d of %d regions failed: %v", len(failed), len(results), failed))
}

// signals: the first SIGINT/SIGTERM closes drain (no new runs, the page in
// flight commits); the second cancels ctx (stop at once).
func signals(parent context.Context, s *settings) (ctx context.Context, drain chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	drain = make(chan struct{})
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			s.logger.Info("signal: finishing the page in flight; a second signal stops at once", "signal", sig.String())
			close(drain)
		case <-ctx.Done():
			return
		}
		select {
		case <-ch:
			s.logger.Warn("second signal: stopping now")
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, drain, func() { signal.Stop(ch); cancel() }
}

// serve starts the /metrics, /healthz and /quota server.
func serve(ctx context.Context, s *settings, addr string, m *metrics, p *pipeline, codes []string, every time.Duration) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, runtimeError(fmt.Errorf("--listen %s: %w", addr, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.handler(p.limiter))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/quota", func(w http.ResponseWriter, r *http.Request) {
		rep, err := buildReport(r.Context(), reportSources{db: p.db, limiter: p.limiter, costs: s.costs,
			quotaKey: p.quotaKey, regions: codes, every: every})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		writeJSON(w, rep.JSON())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("metrics server", "err", err)
		}
	}()
	s.logger.Info("listening", "addr", ln.Addr().String())
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}, nil
}
