package main

import (
	"context"
	"net"
	"net/netip"
	"os"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/wiring"
)

// uiTokenEnv holds the dashboard's access token (web.UITokenEnv).
const uiTokenEnv = web.UITokenEnv

// readUIToken is INGEST_UI_TOKEN, or a usage error when it is set but too
// weak to guard the data (signin.CheckToken), saying how to make a strong one.
func readUIToken() (string, error) {
	tok := os.Getenv(uiTokenEnv)
	if tok == "" {
		return "", nil
	}
	if err := signin.CheckToken(tok); err != nil {
		return "", usageErrorf("%s is too weak to guard the dashboard and the API: %w; make a random one with `ingest tokens new-ui-token` (or `openssl rand -base64 24`)",
			uiTokenEnv, err)
	}
	return tok, nil
}

type serveFlags struct {
	listen string
	// listenFrom names where --listen came from, for its errors.
	listenFrom string
	public     bool
	// noThumbs leaves the videos' thumbnails (from i.ytimg.com) out of
	// the pages: offline or private use.
	noThumbs       bool
	schedule       scheduleFlags
	apiPlans       string
	trustedProxies string
	// publicURL is --public-url, and publicURLFrom where it came from.
	publicURL, publicURLFrom string
	// cacheControl is --cache-control, and cacheControlFrom where it came
	// from.
	cacheControl, cacheControlFrom string
	// purgeURL is --purge-url, and purgeURLFrom where it came from.
	purgeURL, purgeURLFrom string
}

func newServeCmd(s *settings) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the JSON API (/api/v1) and the dashboard (/) over the database, read-only",
		Long: `serve answers the JSON API under /api/v1 (search, charts, videos, quota,
runs; see docs/api.md) and a dashboard at / (the quota at a glance, each
region's chart, each video's history, search), from the database. It spends
no upstream quota; it writes only each token's last use and, on a
PostgreSQL --db without Redis, the API's own limiter.

/healthz and /readyz answer without a token. Set INGEST_UI_TOKEN to ask
every other request for that token: scripts send it as Authorization: Bearer
<token>, browsers sign in at /login (a cookie). It must have at least 20
characters and 128 bits of entropy as ingest estimates it (repeats, runs and
one kind of character count for little): make one with ingest tokens
new-ui-token. After 10 wrong tokens from one address (an IPv6 /64) within a
minute, no token is checked from it for a minute, doubling while it keeps
failing: 429 with Retry-After; the right token from any other address is
always checked. Without a token, serve
listens on a loopback address only, unless --public says the data is meant
to be public. --public opens the readers' routes (the front page, charts,
search, videos, /api/v1/charts, /api/v1/search, /api/v1/videos) to anyone,
metered by the anonymous plan; the operator's (/operator, /api/v1/quota,
/api/v1/runs) still need INGEST_UI_TOKEN and are absent without it
(docs/api.md, "Who may reach each route").

API clients are metered by plan (--api-plans / INGEST_API_PLANS): a token
from ingest tokens add on its plan, a caller without one on the anonymous
plan by address (--trusted-proxies for X-Forwarded-For, which the throttle
of wrong tokens reads too). Answers carry the
RateLimit and RateLimit-Policy fields; a refusal is 429 with Retry-After.
Several serve processes on one REDIS_URL, or without it on one PostgreSQL
database, share each client's plan; without either, each serve counts
its clients in memory. Over any trailing window a client gets at most its
plan's limit (docs/api.md).
The holder of INGEST_UI_TOKEN is not metered.

Next runs and the plan follow the schedule a daemon on this database records,
as in ingest report; --every and --regions override it.`,
		Example: `  ingest serve --db demo/ingest.db
  export INGEST_UI_TOKEN="$(ingest tokens new-ui-token)"   # keep it: scripts and sign-ins send it
  ingest serve --listen 0.0.0.0:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.schedule.given(cmd)
			f.listenFrom = envflag.Given(cmd.Flags().Lookup("listen"))
			f.publicURLFrom = publicURLFrom(cmd)
			f.cacheControlFrom = cacheControlFrom(cmd)
			f.purgeURLFrom = purgeURLFrom(cmd)
			return runServe(cmd.Context(), s, f)
		},
	}
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve on, host:port")
	cmd.Flags().BoolVar(&f.noThumbs, "no-thumbnails", false, "show no thumbnails: the pages load nothing from YouTube's image host, the API leaves the thumbnail out (offline or private use)")
	cmd.Flags().BoolVar(&f.public, "public", false, "serve the charts, search, videos and their API to anyone (metered by the anonymous plan); the operator's page, /api/v1/quota and /api/v1/runs still need INGEST_UI_TOKEN, and are absent without it")
	f.schedule.bind(cmd)
	bindSiteFlags(cmd, &f.apiPlans, &f.trustedProxies)
	bindPublicURL(cmd, &f.publicURL)
	bindCacheControl(cmd, &f.cacheControl)
	bindPurgeURL(cmd, &f.purgeURL)
	return cmd
}

func runServe(ctx context.Context, s *settings, f *serveFlags) error {
	if err := checkListen(f.listenFrom, f.listen); err != nil {
		return err
	}
	tok, err := readUIToken()
	if err != nil {
		return err
	}
	if web.AccessFor(tok, f.listen, f.public) == web.OperationalOnly {
		return usageErrorf("%s %s is not a loopback address: set %s to ask for a token, or pass --public if the data is meant to be public",
			f.listenFrom, f.listen, uiTokenEnv)
	}
	sch, err := f.schedule.schedule()
	if err != nil {
		return err
	}
	plans, proxies, err := apiSettings(f.apiPlans, f.trustedProxies)
	if err != nil {
		return err
	}
	pub, err := parsePublicURL(f.publicURLFrom, f.publicURL)
	if err != nil {
		return err
	}
	purgeTo, err := parsePurgeURLs(f.purgeURLFrom, f.purgeURL)
	if err != nil {
		return err
	}
	cache, err := parseCacheControl(f.cacheControlFrom, f.cacheControl, len(purgeTo) > 0)
	if err != nil {
		return err
	}
	db, err := openServeDB(ctx, s)
	if err != nil {
		return err
	}
	defer db.Close()
	k, _ := apiKey()
	h, closeWeb, err := s.host().OpenWeb(ctx, db, wiring.Serve{Schedule: sch, Plans: plans, QuotaKey: s.quotaKey, APIKey: k,
		Standing: s.standing, Web: web.Config{Listen: f.listen, Public: f.public, NoThumbnails: f.noThumbs,
			TrustedProxies: proxies, Token: tok, PublicURL: pub, Cache: cache}, Purge: purgeTo})
	if err != nil {
		return err
	}
	defer closeWeb()
	return s.host().Serve(ctx, f.listen, h)
}

// apiSettings reads --api-plans and --trusted-proxies, for the site serve
// and run --listen serve alike.
func apiSettings(apiPlans, trustedProxies string) (*ratelimit.APIPlans, []netip.Prefix, error) {
	plans, err := loadAPIPlans(apiPlans)
	if err != nil {
		return nil, nil, err
	}
	if err := plans.CheckRoutes(web.APIRouteNames()); err != nil {
		return nil, nil, usageErrorf("--api-plans: %w", err)
	}
	proxies, err := parseTrustedProxies(trustedProxies)
	return plans, proxies, err
}

// openServeDB opens the database for writing, never creating it, or
// read-only when it cannot be written (wiring.Host.OpenServeDB).
func openServeDB(ctx context.Context, s *settings) (*wiring.Database, error) {
	if !s.host().DBExists() {
		return openExisting(ctx, s)
	}
	db, ro, err := s.host().OpenServeDB(ctx)
	if err != nil {
		return nil, err
	}
	if ro != nil {
		s.logger.Warn("the database cannot be written: serving it read-only; tokens' last use is not recorded", ingest.LogErr, ro)
		s.warnTerms(ctx, db)
	}
	return db, nil
}

// checkListen wants host:port (or :port) with a port a listener can take,
// naming from (the flag, or the variable that gave it) when it is not.
func checkListen(from, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("%s: want host:port or :port, got %q", from, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usageErrorf("%s: want a port from 0 to 65535 after the colon, got %q", from, addr)
	}
	return nil
}

// bindSiteFlags binds the flags of the site's API, the same on serve and
// run (--listen): its clients' plans and the proxies trusted to name them.
func bindSiteFlags(cmd *cobra.Command, apiPlans, trustedProxies *string) {
	cmd.Flags().StringVar(apiPlans, "api-plans", "", "plans file of the API's clients, replacing the built-in plans whole (see docs/api.md)")
	envflag.With(cmd.Flags().Lookup("api-plans"), apiPlansEnv)
	cmd.Flags().StringVar(trustedProxies, "trusted-proxies", "", trustedProxiesUsage)
}
