package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// settings are the flags common to every command, each with an
// environment variable; a flag given on the command line wins.
type settings struct {
	db        string
	redisURL  string
	costsFile string
	endpoint  string
	quotaKey  string
	logFormat string
	logLevel  string

	costs  *ingest.Costs
	logger *slog.Logger
	level  slog.Level
	stderr io.Writer
}

// The settings a command can use. A command validates only those it names
// (annotation "uses"), so that `search` does not fail on a costs file it
// never reads, nor `completion` on a log format.
const (
	useDB       = "db"
	useRedis    = "redis"
	useCosts    = "costs"
	useEndpoint = "endpoint"
	useQuotaKey = "quota-key"
	useLog      = "log"
)

// uses marks cmd as using the named settings.
func uses(cmd *cobra.Command, names ...string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations["uses"] = strings.Join(names, ",")
	return cmd
}

// usesAll is every setting: the commands that call the upstream.
var usesAll = []string{useDB, useRedis, useCosts, useEndpoint, useQuotaKey, useLog}

func usesSetting(cmd *cobra.Command, name string) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if v, ok := c.Annotations["uses"]; ok {
			return slices.Contains(strings.Split(v, ","), name)
		}
	}
	return false
}

func (s *settings) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&s.db, "db", "ingest.db", "SQLite database file")
	f.StringVar(&s.redisURL, "redis", "", "Redis URL of the shared limiter, redis://host:6379/0; add ?addr=host2:port&addr=... for a cluster\n(unset: the embedded limiter in the database, for one host)")
	f.StringVar(&s.costsFile, "costs", "", "costs file replacing the built-in costs.yaml whole")
	f.StringVar(&s.endpoint, "youtube-endpoint", "", "YouTube Data API base URL, for a proxy or a test server (default Google's)")
	f.StringVar(&s.quotaKey, "quota-key", "", "name of the upstream quota shared by every worker (default a short hash of YOUTUBE_API_KEY);\nname the Cloud project when several keys share one quota")
	f.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&s.logLevel, "log-level", "info", "least level logged: debug, info, warn or error")
	for name, env := range map[string]string{"db": "INGEST_DB", "redis": "REDIS_URL", "costs": "INGEST_COSTS",
		"youtube-endpoint": "YOUTUBE_ENDPOINT", "quota-key": "INGEST_QUOTA_KEY",
		"log-format": "INGEST_LOG_FORMAT", "log-level": "INGEST_LOG_LEVEL"} {
		withEnv(f.Lookup(name), env)
	}
}

var quotaKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// resolve applies the environment and checks the settings cmd uses.
func (s *settings) resolve(cmd *cobra.Command) error {
	if err := applyEnv(cmd); err != nil {
		return err
	}
	s.stderr = cmd.ErrOrStderr()
	s.logger = newLogger(s.stderr, "text", slog.LevelInfo)
	checks := []struct {
		use   string
		check func() error
	}{
		{useLog, s.resolveLogger},
		{useDB, s.checkDB},
		{useQuotaKey, s.checkQuotaKey},
		{useRedis, s.checkRedisURL},
		{useEndpoint, func() error { return checkEndpoint(s.endpoint) }},
		{useCosts, s.loadCosts},
	}
	for _, c := range checks {
		if !usesSetting(cmd, c.use) {
			continue
		}
		if err := c.check(); err != nil {
			return err
		}
	}
	if s.costs == nil {
		s.costs = ingest.DefaultCosts()
	}
	return nil
}

func (s *settings) resolveLogger() error {
	if err := s.level.UnmarshalText([]byte(s.logLevel)); err != nil || strings.ContainsAny(s.logLevel, "+-") {
		return usageErrorf("--log-level / INGEST_LOG_LEVEL: want debug, info, warn or error, got %q", s.logLevel)
	}
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

func (s *settings) checkDB() error {
	if s.db == "" {
		return usageErrorf("--db / INGEST_DB: must name a file")
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
		s.costs = ingest.DefaultCosts()
		return nil
	}
	data, err := os.ReadFile(s.costsFile)
	if err != nil {
		return usageErrorf("--costs / INGEST_COSTS: %w", err)
	}
	c, err := ingest.LoadCosts(s.costsFile, data)
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

// keyHash is the short, one-way name of an API key: the default quota key.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:8]
}

// resolveQuotaKey names the quota: --quota-key, else the hash of the key.
func (s *settings) resolveQuotaKey(apiKey string) string {
	if s.quotaKey != "" {
		return s.quotaKey
	}
	return keyHash(apiKey)
}

// openStore opens (creating and migrating) the database.
func (s *settings) openStore(ctx context.Context) (*store.DB, error) {
	db, err := store.Open(ctx, s.db)
	if err != nil {
		return nil, runtimeError(fmt.Errorf("open database %s: %w", s.db, err))
	}
	return db, nil
}

// limiter is what the commands need of either limiter backend.
type limiter interface {
	Take(ctx context.Context, op string) (ingest.Decision, error)
	Block(ctx context.Context, pool string) (time.Time, error)
	Refund(ctx context.Context, call ingest.Call) error
	State(ctx context.Context) ([]ingest.PoolState, error)
	Refill(ctx context.Context, rec ingest.Recalled) (int, error)
	Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error)
	Config(ctx context.Context) ([]quota.PoolConfig, error)
	CheckConfig(ctx context.Context) error
	ApplyConfig(ctx context.Context) ([]quota.ConfigChange, error)
	Backend() string
}

var (
	_ limiter = (*quota.Redis)(nil)
	_ limiter = (*quota.SQLite)(nil)
)

// openLimiter builds the Redis limiter when --redis is set, else the
// embedded one on the database. close releases the Redis client. db may be
// nil with Redis (a host without a database): there is no ledger then.
func (s *settings) openLimiter(db *store.DB, quotaKey string) (l limiter, closeFn func(), err error) {
	opts := quota.Options{QuotaKey: quotaKey, Costs: s.costs, Logger: s.logger, Worker: workerName()}
	if db != nil {
		opts.Recall = func(ctx context.Context) (ingest.Recalled, error) {
			return db.Recall(ctx, quotaKey, time.Now().Add(-s.costs.Span()))
		}
	}
	if s.redisURL == "" {
		if db == nil {
			return nil, nil, runtimeError(errors.New("the embedded limiter lives in the database, and there is none"))
		}
		l, err = quota.NewSQLite(db.Writer(), opts)
		return l, func() {}, runtimeError(err)
	}
	client, err := redisClient(s.redisURL)
	if err != nil {
		return nil, nil, err
	}
	redis.SetLogger(redisLogger{s.logger})
	r, err := quota.NewRedis(client, opts)
	if err != nil {
		client.Close()
		return nil, nil, runtimeError(err)
	}
	return r, func() { client.Close() }, nil
}

// workerName names this process in the limiter's register: host and pid.
func workerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s.%d", strings.NewReplacer(",", "_", ":", "_").Replace(host), os.Getpid())
}

// redisLogger sends go-redis's own messages through slog, so that
// --log-format json stays JSON.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// redisClient parses --redis: one server, or a cluster when addr= lists
// more nodes; the limiter's timeouts reach the socket.
func redisClient(raw string) (redis.UniversalClient, error) {
	c, err := quota.NewClient(raw, quota.DefaultTimeout)
	if err != nil {
		return nil, usageErrorf("--redis / REDIS_URL: %s", redactURL(err.Error(), raw))
	}
	return c, nil
}

// checkRedisURL parses --redis without connecting: a usage error comes
// before anything is opened or written.
func (s *settings) checkRedisURL() error {
	if s.redisURL == "" {
		return nil
	}
	c, err := redisClient(s.redisURL)
	if err != nil {
		return err
	}
	return c.Close()
}

// redactURL keeps a Redis password out of error messages.
func redactURL(msg, raw string) string {
	return strings.ReplaceAll(msg, raw, "(the URL given)")
}

// checkEndpoint wants an absolute http(s) URL, or nothing for Google's.
func checkEndpoint(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("--youtube-endpoint / YOUTUBE_ENDPOINT: want an http(s) URL like http://localhost:8080/, got %q", raw)
	}
	return nil
}
