package main

// The checks of the common settings (settings.go's table): each reads its
// flag's text and refuses a bad value with a usage error naming the flag
// and its variable, before anything is opened, spent or written.

import (
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

func (s *settings) checkLogLevel() error {
	if err := s.level.UnmarshalText([]byte(s.logLevel)); err != nil || strings.ContainsAny(s.logLevel, "+-") {
		return usageErrorf("--log-level / INGEST_LOG_LEVEL: want debug, info, warn or error, got %q", s.logLevel)
	}
	return nil
}

// checkLogFormat checks --log-format and, the level being known, builds
// the logger.
func (s *settings) checkLogFormat() error {
	if s.logFormat != "text" && s.logFormat != "json" {
		return usageErrorf("--log-format / INGEST_LOG_FORMAT: want text or json, got %q", s.logFormat)
	}
	s.logger = newLogger(s.stderr, s.logFormat, s.level)
	return nil
}

// newLogger writes durations as seconds (a float), in both formats:
// slog's JSON handler would write nanoseconds.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.Float64Value(math.Round(a.Value.Duration().Seconds()*1000) / 1000)
		}
		return a
	}}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// checkClock builds the house clock: the host's, or offset by the file
// clock.RehearseEnv names (docs/operations/faults.md, Rehearsing a clock step),
// whose later bad content is logged and changes nothing.
func (s *settings) checkClock() error {
	c, err := clock.FromEnv(os.Getenv, func(err error) {
		s.logger.Error("the rehearsal clock keeps its offset", ingest.LogErr, err)
	})
	if err != nil {
		return usageErrorf("%w", err)
	}
	s.clock = c
	return nil
}

func (s *settings) checkDB() error {
	if s.db == "" {
		return usageErrorf("--db / INGEST_DB: must name a file or a postgres:// URL")
	}
	if err := store.CheckURL(s.db); err != nil {
		return usageErrorf("--db / INGEST_DB: %w", err)
	}
	if st, err := os.Stat(s.db); err == nil && !st.Mode().IsRegular() && !st.IsDir() && !store.IsURL(s.db) {
		// SQLite opens a device and fails at the first page with an I/O
		// error that names neither the file nor the fix.
		return usageErrorf("--db / INGEST_DB: %s is not a regular file (a device, a pipe or a socket): name a database file, which the first run creates", s.db)
	}
	return nil
}

func (s *settings) checkQuotaKey() error {
	if s.quotaKey != "" && !quotaKeyPattern.MatchString(s.quotaKey) {
		return usageErrorf("--quota-key / INGEST_QUOTA_KEY: want 1-64 letters, digits, '.', '_' or '-', got %q", s.quotaKey)
	}
	return nil
}

func (s *settings) loadCosts() error {
	if s.costsFile == "" {
		s.costs = costs.Default()
		return nil
	}
	data, err := os.ReadFile(s.costsFile)
	if err != nil {
		return usageErrorf("--costs / INGEST_COSTS: %w", err)
	}
	c, err := costs.Load(s.costsFile, data)
	if err != nil {
		return usageErrorf("--costs: %w", err)
	}
	s.costs = c
	return nil
}

// apiKey returns YOUTUBE_API_KEY or a usage error naming it.
func apiKey() (string, error) {
	k := strings.TrimSpace(os.Getenv("YOUTUBE_API_KEY"))
	if k == "" {
		return "", usageErrorf("YOUTUBE_API_KEY is not set: this command calls the YouTube Data API and needs a key")
	}
	return k, nil
}

// resolveQuotaKey names the quota: --quota-key, else the hash of the key.
func (s *settings) resolveQuotaKey(apiKey string) string {
	if s.quotaKey != "" {
		return s.quotaKey
	}
	return ledger.KeyHash(apiKey)
}

// checkReplicas reads --redis-replicas.
func (s *settings) checkReplicas() error {
	n, err := strconv.Atoi(s.replicas)
	if err != nil || n < 0 {
		return usageErrorf("--redis-replicas / INGEST_REDIS_REPLICAS: want a whole number of replicas, 0 or more, got %q", s.replicas)
	}
	return nil
}

// replicaCount is --redis-replicas, checked.
func (s *settings) replicaCount() int {
	n, _ := strconv.Atoi(s.replicas)
	return n
}

// checkRedisURL parses --redis without connecting: a usage error comes
// before anything is opened or written.
func (s *settings) checkRedisURL() error {
	if s.redisURL == "" {
		return nil
	}
	c, err := (&wiring.Host{RedisURL: s.redisURL}).RedisClient()
	if err != nil {
		return runtimeError(err)
	}
	return c.Close()
}

// checkEndpoint wants an absolute http(s) URL, or nothing for Google's.
func (s *settings) checkEndpoint() error {
	raw := s.endpoint
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return usageErrorf("--youtube-endpoint / YOUTUBE_ENDPOINT: want an http(s) URL like http://localhost:8080/, got %q", ingest.Redact(raw))
	}
	if strings.ContainsAny(raw, "?#") {
		// The client resolves each call's path against the base, which
		// drops a query: a key put there would never be sent, only printed.
		return usageErrorf("--youtube-endpoint / YOUTUBE_ENDPOINT: give the API's base URL without a query or fragment (the key is YOUTUBE_API_KEY's), got %q", ingest.Redact(raw))
	}
	if base, ok := strings.CutSuffix(strings.TrimSuffix(u.Path, "/"), "/youtube/v3"); ok {
		// The client adds the API's path itself: given twice, every call
		// would be a 404 of a doubled path.
		given := ingest.Redact(raw)
		u.Path = base + "/"
		return usageErrorf("--youtube-endpoint / YOUTUBE_ENDPOINT: give the API's base URL without youtube/v3/, which the client adds: %s, not %q", ingest.Redact(u.String()), given)
	}
	return nil
}

// checkStanding reads --standing, --stats-retention and --derived, one
// setting told in three flags: what the key may keep and show.
func (s *settings) checkStanding() error {
	var st ingest.Standing
	switch strings.TrimSpace(s.standingName) {
	case ingest.StandingStandard:
	case ingest.StandingExtended:
		st.Extended = true
	default:
		return usageErrorf("--standing / INGEST_STANDING: want %s or %s, got %q (docs/explanation/terms.md)",
			ingest.StandingStandard, ingest.StandingExtended, s.standingName)
	}
	keep, err := parseKeep(s.statsRetention)
	if err != nil {
		return usageErrorf("--stats-retention / INGEST_STATS_RETENTION: %v", err)
	}
	if !st.Extended && keep > ingest.DataFor {
		return usageErrorf("--stats-retention / INGEST_STATS_RETENTION: %s is more than the standard standing allows (%s); "+
			"state --standing extended (INGEST_STANDING) only if the key was accepted under the derived-metrics policy (docs/explanation/terms.md)",
			ingest.Days(keep), ingest.Days(ingest.DataFor))
	}
	st.StatsFor = keep
	switch strings.TrimSpace(s.derived) {
	case "off":
	case "on":
		st.Derived = true
	default:
		return usageErrorf("--derived / INGEST_DERIVED: want off or on, got %q", s.derived)
	}
	if st.Derived && !st.Extended {
		s.logger.Warn("--derived on under the standard standing: movement, peak rank, days on chart and trends are shown, " +
			"labelled as computed by ingest; III.E.4.h of the YouTube API policies forbids derived metrics that replace " +
			"or modify API data, and that reading is the operator's call (docs/explanation/terms.md)")
	}
	s.standing = st
	return nil
}
