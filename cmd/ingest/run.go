package main

import (
	"context"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/wiring"
)

type runFlags struct {
	unreachedOK bool // --limiter-unreached-ok
	once        bool
	regions     string
	every       time.Duration
	// maxStale is how stale a region's own chart may grow when the pools
	// are short before the plan drops it (--max-stale).
	maxStale      time.Duration
	maxStaleGiven bool
	listen        string
	// listenFrom names where --listen came from, for its errors.
	listenFrom string
	// noThumbs is --no-thumbnails, for the dashboard of --listen.
	noThumbs bool
	// public is --public: --listen serves the readers' pages and API to
	// anyone, the operator's only with INGEST_UI_TOKEN.
	public bool
	strict bool
	keep   string // prune.go: "" keeps what the standing allows
	// categories is --categories; cats what it names ("" first: the
	// unfiltered chart), set by validate.
	categories string
	cats       []string
	track      trackFlags
	// everyGiven: --every (or its variable) was set; run --once plans only
	// then, as cron's period is not known otherwise.
	everyGiven bool
	// regionsGiven: --regions (or its variable) was set, if only to "".
	regionsGiven bool
	pace         bool // --pace: package pace
	// pacedOnce: --once with --pace given: only the charts the plan says
	// are due run.
	pacedOnce bool

	// trustedProxies is --trusted-proxies, for the dashboard of --listen;
	// proxies what it names, set by validate.
	trustedProxies string
	proxies        []netip.Prefix
	// apiPlans is --api-plans, for the API of --listen; plans what it
	// gives, set by validate.
	apiPlans string
	plans    *ratelimit.APIPlans
	// publicURL is --public-url, for the dashboard of --listen;
	// publicURLFrom where it came from, pub it read.
	publicURL, publicURLFrom string
	pub                      *url.URL
	// backup is --backup-to, --backup-every and --backup-keep; backups
	// the schedule they give, set in RunE.
	backup  backupFlags
	backups *dbcopy.Backups
	// publish is --publish, the directory the readers' site is written
	// into after each landing, with search what its pages' search form
	// points at (--search-url); published what they give, set by
	// validate.
	publish, publishFrom string
	search               publishFlags
	published            *wiring.Publish
	// cacheControl is --cache-control, for the dashboard of --listen;
	// cacheControlFrom where it came from, cache what it read.
	cacheControl, cacheControlFrom string
	cache                          *edge.Policy
	// purgeURL is --purge-url, for the caches in front of --listen;
	// purgeURLFrom where it came from, purgeTo what it names.
	purgeURL, purgeURLFrom string
	purgeTo                []*url.URL
	// startTimeout is --start-timeout: how long the daemon's start waits
	// on the upstream for the region catalogue.
	startTimeout time.Duration
}

// regionsFlag is --regions as given, read by wiring against the region
// catalogue the process runs by (each chart with its tier and depth).
// Left out, it is the default regions; given empty, it is a mistake (a
// variable that expanded to nothing), not all.
func regionsFlag(list string, given bool) (regions.Selection, error) {
	if given && strings.Trim(list, ", \t") == "" {
		return "", usageErrorf("--regions: is empty; give codes such as US,GB, or leave it out for every default region")
	}
	return regions.Selection(list), nil
}

// parseRegion reads one region code, given to name (a flag, or a command
// for its argument); "" stays "".
func parseRegion(name, v string) (string, error) {
	code := strings.ToUpper(strings.TrimSpace(v))
	if code != "" && !regions.Valid(code) {
		if hint := regions.Suggest(v, regions.Builtin); hint != "" {
			return "", usageErrorf("%s: %q is not an ISO 3166-1 alpha-2 region code; did you mean %s?", name, v, hint)
		}
		return "", usageErrorf("%s: %q is not an ISO 3166-1 alpha-2 region code", name, v)
	}
	return code, nil
}

// unreachedFlag is run's --limiter-unreached-ok.
func unreachedFlag(cmd *cobra.Command, ok *bool) {
	cmd.Flags().BoolVar(ok, "limiter-unreached-ok", false, "a Redis (REDIS_URL) that has not answered since the start, which this database never spent on, is an outage\nto ride out within each pool's fail_open budget, not a mistyped address (refused, exit 2, without it)")
}

func newRunCmd(s *settings) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Ingest the regions' most-popular charts, as a daemon or once",
		Long: `run fetches each region's most-popular chart to its depth (the whole chart
unless --regions says REGION:depth=N) and stores it.

As a daemon it runs every --every, in UTC, region i offset by i x every/n (n
the regions run or the default regions, whichever are more), so that the
regions spread their spending over the period; a tier-N region
(REGION:tier=N) runs at most every N x --every, at offsets spread over those
N periods, and when the pools are short it is slowed, and dropped, before
the tiers above it (docs/explanation/pacing.md). A region whose
latest slot passed while the daemon was down, and is older than its paced
cadence, runs once at start, every region's own chart first. With --once it
runs every selected region now, one after another, and exits: the form for
system cron or a Kubernetes CronJob. With --once --pace it runs only the
charts the plan says are due (older than their paced cadence, each never more
often than --every), highest priority first: run it from cron every 10
minutes and the charts are spread over the day as the daemon spreads them.

--regions all is every region of the region catalogue: the regions the
upstream charts, as i18nRegions.list names them (1 unit). The catalogue is
kept in the database and read again at most daily: a daemon reads it at start
when it is missing or a day old, and every day after; run --once only when
--regions names all. Until the first read, and when the call is refused or
fails, the stored catalogue serves, else the copy built into ingest; the run
goes on. The daemon's start waits for that read at most --start-timeout, then
plans on the stored catalogue, else the built-in copy, and reads it on behind,
planning again if it selects other charts.

At start, run prints the plan: what the schedule spends in a day in each
pool against what the pool allows. A schedule that cannot fit is a warning,
or with --strict an error (exit 2) before anything is spent. With --once the
plan is printed only when --every says how often cron runs it.

When the limiter says no, a pass stops cleanly and says when it could go on;
that is not a failure (exit 0), so a CronJob does not retry into an exhausted
quota. SIGINT or SIGTERM: no new runs; the page in flight is stored; exit 0.
A second signal stops at once.`,
		Example: `  YOUTUBE_API_KEY=... ingest run --once --regions US,GB
  */10 * * * *  ingest run --once --pace --every 1h      # crontab: paced, every chart at most hourly
  YOUTUBE_API_KEY=... REDIS_URL=redis://localhost:6379/0 ingest run --every 1h --listen :9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.everyGiven, f.regionsGiven = cmd.Flags().Changed("every"), cmd.Flags().Changed("regions")
			f.listenFrom = envflag.Given(cmd.Flags().Lookup("listen"))
			f.publicURLFrom = publicURLFrom(cmd)
			f.publishFrom = envflag.Given(cmd.Flags().Lookup("publish"))
			f.search.searchURLFrom = envflag.Given(cmd.Flags().Lookup("search-url"))
			f.cacheControlFrom = cacheControlFrom(cmd)
			f.purgeURLFrom = purgeURLFrom(cmd)
			f.maxStaleGiven = cmd.Flags().Changed("max-stale")
			f.pacedOnce = f.once && f.pace && cmd.Flags().Changed("pace")
			if err := f.track.validate(cmd); err != nil {
				return err
			}
			var err error
			if f.backups, err = f.backup.validate(cmd, s, f.once); err != nil {
				return err
			}
			s.host().RefuseUnreached = !f.unreachedOK
			return runRun(cmd.Context(), s, f)
		},
	}
	cmd.Flags().BoolVar(&f.once, "once", false, "run every selected region now, one after another, then exit")
	unreachedFlag(cmd, &f.unreachedOK)
	cmd.Flags().StringVar(&f.regions, "regions", "", "the charts to keep: "+regions.Syntax+"; all is the catalogue the database keeps (default "+strings.Join(regions.Default, ",")+"; docs/explanation/pacing.md)")
	daysVar(cmd.Flags(), &f.every, "every", time.Hour, "schedule period (1h, 90m, 1d), at least 1m; region i runs at offset i x P/n, P its tier x every, n the charts or the default regions, whichever are more")
	cmd.Flags().StringVar(&f.listen, "listen", "", "serve /metrics, /healthz and /readyz on this address (host:port); also /quota, the API and the dashboard on loopback or with INGEST_UI_TOKEN, and the readers' pages and API with --public")
	bindSiteFlags(cmd, &f.apiPlans, &f.trustedProxies)
	bindPublicURL(cmd, &f.publicURL)
	bindCacheControl(cmd, &f.cacheControl)
	bindPurgeURL(cmd, &f.purgeURL)
	cmd.Flags().BoolVar(&f.public, "public", false, "--listen serves the charts, search, videos and their API to anyone (metered by the anonymous plan); /quota, the runs and the operator's page still need INGEST_UI_TOKEN, and are absent without it")
	cmd.Flags().BoolVar(&f.noThumbs, "no-thumbnails", false, "the dashboard of --listen and the pages of --publish show no thumbnails: its pages load nothing from YouTube's image host, its API leaves the thumbnail out")
	cmd.Flags().StringVar(&f.publish, "publish", "", "write the readers' site into this directory as files a static host serves, at the start and after each landing (as ingest publish DIR; docs/operations/readers.md, Publish)")
	f.search.bind(cmd)
	cmd.Flags().BoolVar(&f.pace, "pace", true, "spread each pool's budget at a rate it holds over its window and day, each chart never more often than --every (the daemon's default); with --once, run only the charts the plan says are due, for cron every few minutes; --pace=false runs every chart at every slot")
	daysVar(cmd.Flags(), &f.maxStale, "max-stale", pace.DefaultBound, "when a pool cannot hold every region's own chart at --every, each is stretched evenly (a tier-N region to N times tier 1's cadence), up to this age, before regions are dropped, the highest tier first, then the last of --regions; at least --every (docs/explanation/pacing.md)")
	cmd.Flags().DurationVar(&f.startTimeout, "start-timeout", wiring.StartTimeout, "how long the daemon's start waits on the upstream for the region catalogue (--regions all); past it the daemon plans on the stored catalogue, else the built-in copy, serves, and reads it on behind (docs/operations.md, The region catalogue)")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "refuse to start (exit 2) when the schedule cannot fit a pool's daily quota")
	cmd.Flags().StringVar(&f.keep, "keep", "", "keep statistics (chart entries, tracked counts) this long (7d, 36h); default and at most what --standing allows.\nCut in whole UTC days: between this less a day and this are kept, never more. The prune runs once every --every, and after run --once's passes; docs/explanation/terms.md")
	envflag.With(cmd.Flags().Lookup("keep"), keepEnv)
	f.track.bind(cmd)
	f.backup.bind(cmd)
	bindCategories(cmd, &f.categories)
	return cmd
}

func (f *runFlags) validate() (regions.Selection, error) {
	sel, err := regionsFlag(f.regions, f.regionsGiven)
	if err != nil {
		return "", err
	}
	if err := checkEvery("--every", f.every); err != nil {
		return "", err
	}
	if f.startTimeout <= 0 {
		return "", usageErrorf("--start-timeout (INGEST_RUN_START_TIMEOUT): must be more than 0, got %s", f.startTimeout)
	}
	switch {
	case f.maxStale >= f.every:
	case f.maxStaleGiven:
		return "", usageErrorf("--max-stale: must be at least --every (%s), got %s", f.every, f.maxStale)
	default:
		f.maxStale = f.every // a period over the default bound is its own
	}
	if f.listen != "" {
		if err := checkListen(f.listenFrom, f.listen); err != nil {
			return "", err
		}
		if _, err := readUIToken(); err != nil {
			return "", err
		}
	}
	if f.plans, f.proxies, err = apiSettings(f.apiPlans, f.trustedProxies); err != nil {
		return "", err
	}
	if f.pub, err = parsePublicURL(f.publicURLFrom, f.publicURL); err != nil {
		return "", err
	}
	if f.purgeTo, err = parsePurgeURLs(f.purgeURLFrom, f.purgeURL); err != nil {
		return "", err
	}
	if f.cache, err = parseCacheControl(f.cacheControlFrom, f.cacheControl, len(f.purgeTo) > 0); err != nil {
		return "", err
	}
	if f.cats, err = parseCategories(f.categories); err != nil {
		return "", err
	}
	if f.publish != "" {
		f.search.publicURL, f.search.publicURLFrom, f.search.noThumbs = f.publicURL, f.publicURLFrom, f.noThumbs
		p, err := f.search.settings(f.publishFrom, f.publish)
		if err != nil {
			return "", err
		}
		f.published = &p
	}
	return sel, nil
}

// purgeWithoutListener says --purge-url does nothing on a run without
// --listen, where a setting shared with a daemon (one environment for the
// CronJob and the Deployment) would otherwise be dropped without a word:
// a warning, or with --strict a usage error. The caches are purged by the
// process that serves the readers, which reads every landing on the
// database, this run's included.
func (f *runFlags) purgeWithoutListener(s *settings) error {
	if len(f.purgeTo) == 0 || f.listen != "" {
		return nil
	}
	msg := f.purgeURLFrom + ": purges nothing without --listen; the caches in front are purged by the process that serves them " +
		"(serve --purge-url, or run --listen --purge-url), which sees this run's landings in the database (docs/operations/readers.md)"
	if f.strict {
		return usageErrorf("--strict: %s", msg)
	}
	s.logger.Warn(msg)
	return nil
}

// timetable is the schedule the flags give, its charts read from
// --regions by wiring (Host.Prepare): read once, it is what the run plans,
// runs and records.
func (f *runFlags) timetable() jobs.Timetable {
	return jobs.Timetable{Categories: f.cats, Every: f.every, MaxStale: f.maxStale}
}

func runRun(ctx context.Context, s *settings, f *runFlags) error {
	sel, err := f.validate()
	if err != nil {
		return err
	}
	if err := f.purgeWithoutListener(s); err != nil {
		return err
	}
	keep, err := s.checkKeep(f.keep)
	if err != nil {
		return err
	}
	b := readBuildInfo()
	r := wiring.Run{Timetable: f.timetable(), Once: f.once, Pace: f.pace, PacedOnce: f.pacedOnce, Record: !f.once || f.everyGiven || f.pacedOnce,
		Plan: !f.once || f.everyGiven, Strict: f.strict,
		TrackEvery: f.track.every, TrackBudget: f.track.budget, Keep: keep, Terms: s.terms(), Regions: sel, Backups: f.backups, StartTimeout: f.startTimeout,
		Build: metrics.Build{Version: b.Version, Revision: b.Revision, GoVersion: b.GoVersion}}
	if span, _ := f.track.span(); span > 0 && (!f.once || f.track.given) {
		r.Track = span
	}
	if f.listen != "" {
		r.Listen = &web.Config{Listen: f.listen, Public: f.public, NoThumbnails: f.noThumbs, TrustedProxies: f.proxies, Token: os.Getenv(uiTokenEnv), PublicURL: f.pub, Cache: f.cache}
		r.Plans, r.Purge = f.plans, f.purgeTo
	}
	r.Publish = f.published
	key, err := apiKey()
	if err != nil {
		return err
	}
	return s.host().Run(ctx, key, s.resolveQuotaKey(key), r)
}
