package main

import (
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/wiring"
)

// settings are the flags common to every command, each with an
// environment variable; a flag given on the command line wins.
type settings struct {
	db        string
	dbDefault bool // neither --db nor INGEST_DB gave db
	redisURL  string
	replicas  string
	costsFile string
	endpoint  string
	quotaKey  string
	logFormat string
	logLevel  string
	// The key's standing under the upstream's terms (terms.go): as given,
	// and as checked.
	standingName   string
	statsRetention string
	derived        string
	standing       ingest.Standing
	termsWarned    bool // warnTerms: once a process

	costs  *ingest.Costs
	clock  clock.Clock // the house's: the host's, or a rehearsal's (clock.RehearseEnv)
	logger *slog.Logger
	level  slog.Level
	stderr io.Writer

	wired *wiring.Host // open.go
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
	useTerms    = "terms"
)

// common is one setting common to every command: its flag, its variable,
// its default, and its check. The table is the one place each is written:
// flags, environment and validation all come from it, in its order (the
// logger first, so that later checks can log).
type common struct {
	use   string // what a command names in uses
	flag  string
	env   string
	def   string
	usage string
	value func(*settings) *string
	check func(*settings) error // nil: nothing to check
	typ   string                // the value's type as --help shows it: "" for a string
}

func commonSettings() []common {
	return []common{
		{useLog, "log-level", "INGEST_LOG_LEVEL", "info", "least level logged: debug, info, warn or error",
			func(s *settings) *string { return &s.logLevel }, (*settings).checkLogLevel, ""},
		{useLog, "log-format", "INGEST_LOG_FORMAT", "text", "log format: text or json",
			func(s *settings) *string { return &s.logFormat }, (*settings).checkLogFormat, ""},
		{useDB, "db", "INGEST_DB", "ingest.db", "the database: a SQLite file, or a postgres:// URL (several hosts)",
			func(s *settings) *string { return &s.db }, (*settings).checkDB, ""},
		{useQuotaKey, "quota-key", "INGEST_QUOTA_KEY", "", "name of the upstream quota shared by every worker (default a short hash of YOUTUBE_API_KEY);\nname the Cloud project when several keys share one quota",
			func(s *settings) *string { return &s.quotaKey }, (*settings).checkQuotaKey, ""},
		{useRedis, "redis", "REDIS_URL", "", "Redis URL of the shared limiter, redis://host:6379/0; add ?addr=host2:port&addr=... for a cluster\n(unset: the embedded limiter in the database: one host on SQLite, every host on a PostgreSQL --db)",
			func(s *settings) *string { return &s.redisURL }, (*settings).checkRedisURL, ""},
		{useRedis, "redis-replicas", "INGEST_REDIS_REPLICAS", "0", "count an admission only once this many Redis replicas hold it (WAIT), so that a failover loses none",
			func(s *settings) *string { return &s.replicas }, (*settings).checkReplicas, "int"},
		{useEndpoint, "youtube-endpoint", "YOUTUBE_ENDPOINT", "", "YouTube Data API base URL, for a proxy or a test server (default Google's)",
			func(s *settings) *string { return &s.endpoint }, (*settings).checkEndpoint, ""},
		{useCosts, "costs", "INGEST_COSTS", "", "costs file replacing the built-in costs.yaml whole",
			func(s *settings) *string { return &s.costsFile }, (*settings).loadCosts, ""},
		{useTerms, "standing", "INGEST_STANDING", ingest.StandingStandard, "the API key's standing under the YouTube API terms (docs/explanation/terms.md): standard (nothing fetched kept over 30 days),\nor extended (an audited key accepted under the derived-metrics policy; then say what it grants)",
			func(s *settings) *string { return &s.standingName }, (*settings).checkStanding, ""},
		{useTerms, "stats-retention", "INGEST_STATS_RETENTION", "30d", "how long statistics (chart entries, tracked counts) may be kept: 30d at most under standard,\nwhat the acceptance grants under extended (400d)",
			func(s *settings) *string { return &s.statsRetention }, nil, ""},
		{useTerms, "derived", "INGEST_DERIVED", "off", "figures ingest computes rather than receives (movement, peak rank, days on chart, trends): off, or on,\nlabelled as computed (III.E.4.h: under standard, on is the operator's own call)",
			func(s *settings) *string { return &s.derived }, nil, ""},
	}
}

// uses marks cmd as using the named settings.
func uses(cmd *cobra.Command, names ...string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations["uses"] = strings.Join(names, ",")
	return cmd
}

// usesAll is every setting: the commands that call the upstream.
var usesAll = []string{useDB, useRedis, useCosts, useEndpoint, useQuotaKey, useLog, useTerms}

// usesOf is the settings cmd names, or its nearest parent that names any.
func usesOf(cmd *cobra.Command) []string {
	for c := cmd; c != nil; c = c.Parent() {
		if v, ok := c.Annotations["uses"]; ok {
			return strings.FieldsFunc(v, func(r rune) bool { return r == ',' }) // "": none
		}
	}
	return nil
}

func (s *settings) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	for _, c := range commonSettings() {
		*c.value(s) = c.def
		f.Var(&textValue{c.value(s), c.typ}, c.flag, c.usage)
		envflag.With(f.Lookup(c.flag), c.env)
	}
}

// textValue is a setting kept as the text given, checked by its check:
// typ names its type in --help (int for --redis-replicas), so that help
// does not call a number a string.
type textValue struct {
	p   *string
	typ string
}

func (v *textValue) String() string { return *v.p }
func (v *textValue) Set(s string) error {
	*v.p = s
	return nil
}
func (v *textValue) Type() string {
	if v.typ == "" {
		return "string"
	}
	return v.typ
}

var quotaKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// resolve applies the environment and checks the settings cmd uses.
func (s *settings) resolve(cmd *cobra.Command) error {
	if err := envflag.Apply(cmd); err != nil {
		return usageErrorf("%v", err)
	}
	s.stderr = cmd.ErrOrStderr()
	s.logger = newLogger(s.stderr, "text", slog.LevelInfo)
	if f := cmd.Flags().Lookup("db"); f != nil {
		s.dbDefault = !f.Changed
	}
	for _, c := range commonSettings() {
		if c.check == nil || !slices.Contains(usesOf(cmd), c.use) {
			continue
		}
		if err := c.check(s); err != nil {
			return err
		}
	}
	// The command's logger is the process's default too, so that what a
	// package logs without being handed one (a long upgrade of the
	// database) reaches the command's stderr in its format.
	slog.SetDefault(s.logger)
	if err := s.checkClock(); err != nil {
		return err
	}
	if s.costs == nil {
		s.costs = costs.Default()
	}
	if s.standing.StatsFor == 0 {
		s.standing = ingest.StandardStanding()
	}
	return s.checkEnvNames(cmd)
}

// envOnly are the variables read with no flag: secrets stay out of
// command lines.
var envOnly = []string{"YOUTUBE_API_KEY", uiTokenEnv, clock.RehearseEnv}

// checkEnvNames warns of every INGEST_* variable that is not a setting's
// name: an old name still read, or one ingest does not read, with the
// name meant. run --strict refuses to start on the latter. Commands that
// use no setting (version, probe) say nothing.
func (s *settings) checkEnvNames(cmd *cobra.Command) error {
	if len(usesOf(cmd)) == 0 {
		return nil
	}
	var unknown []string
	for _, n := range envflag.Notes(cmd.Root(), os.Environ(), envOnly) {
		s.logger.Warn(n.String())
		if !n.Renamed {
			unknown = append(unknown, n.Name+" (did you mean "+n.Want+"?)")
		}
	}
	if f := cmd.Flags().Lookup("strict"); f != nil && f.Value.String() == "true" && len(unknown) > 0 {
		return usageErrorf("--strict: not settings of ingest: %s; rename or unset them", strings.Join(unknown, ", "))
	}
	return nil
}
