package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"regexp"
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

	costs  *ingest.Costs
	logger *slog.Logger
	stderr io.Writer
}

// envFlag ties a flag to its environment variable.
type envFlag struct {
	name, env string
	dest      *string
}

func (s *settings) flags() []envFlag {
	return []envFlag{
		{"db", "INGEST_DB", &s.db},
		{"redis", "REDIS_URL", &s.redisURL},
		{"costs", "INGEST_COSTS", &s.costsFile},
		{"youtube-endpoint", "YOUTUBE_ENDPOINT", &s.endpoint},
		{"quota-key", "INGEST_QUOTA_KEY", &s.quotaKey},
		{"log-format", "INGEST_LOG_FORMAT", &s.logFormat},
	}
}

func (s *settings) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&s.db, "db", "ingest.db", "SQLite database file [$INGEST_DB]")
	f.StringVar(&s.redisURL, "redis", "", "Redis URL of the shared limiter, redis://host:6379/0; add ?addr=host2:port&addr=... for a cluster\n(unset: the embedded limiter in the database, for one host) [$REDIS_URL]")
	f.StringVar(&s.costsFile, "costs", "", "costs file replacing the built-in costs.yaml whole [$INGEST_COSTS]")
	f.StringVar(&s.endpoint, "youtube-endpoint", "", "YouTube Data API base URL, for a proxy or a test server (default Google's) [$YOUTUBE_ENDPOINT]")
	f.StringVar(&s.quotaKey, "quota-key", "", "name of the upstream quota shared by every worker (default a short hash of YOUTUBE_API_KEY);\nname the Cloud project when several keys share one quota [$INGEST_QUOTA_KEY]")
	f.StringVar(&s.logFormat, "log-format", "text", "log format: text or json [$INGEST_LOG_FORMAT]")
}

var quotaKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// resolve applies the environment and checks what every command needs.
func (s *settings) resolve(cmd *cobra.Command) error {
	for _, f := range s.flags() {
		if v, ok := os.LookupEnv(f.env); ok && !cmd.Flags().Changed(f.name) {
			*f.dest = v
		}
	}
	s.stderr = cmd.ErrOrStderr()
	switch s.logFormat {
	case "text":
		s.logger = slog.New(slog.NewTextHandler(s.stderr, nil))
	case "json":
		s.logger = slog.New(slog.NewJSONHandler(s.stderr, nil))
	default:
		return usageErrorf("--log-format / INGEST_LOG_FORMAT: want text or json, got %q", s.logFormat)
	}
	if s.db == "" {
		return usageErrorf("--db / INGEST_DB: must name a file")
	}
	if s.quotaKey != "" && !quotaKeyPattern.MatchString(s.quotaKey) {
		return usageErrorf("--quota-key / INGEST_QUOTA_KEY: want 1-64 letters, digits, '.', '_' or '-', got %q", s.quotaKey)
	}
	if err := s.checkRedisURL(); err != nil {
		return err
	}
	if err := checkEndpoint(s.endpoint); err != nil {
		return err
	}
	return s.loadCosts()
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
			return db.Recall(ctx, quotaKey, time.Now().Add(-recallSpan(s.costs)))
		}
	}
	if s.redisURL == "" {
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

// recallSpan is how far back a limiter may need the ledger: the longest
// window, or a calendar day of 25 hours.
func recallSpan(c *ingest.Costs) time.Duration {
	d := 25 * time.Hour
	for _, p := range c.Pools {
		d = max(d, p.Window)
	}
	return d
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
