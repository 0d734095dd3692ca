package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/wiring"
)

type proxyFlags struct {
	listen   string
	apiPlans string
	// listenFrom names where --listen came from, for its errors.
	listenFrom string
}

func newProxyCmd(s *settings) *cobra.Command {
	f := &proxyFlags{}
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Serve the YouTube Data API to your team's programs with the operator's key, every call metered by the daemon's limiter",
		Long: `proxy serves the YouTube Data API v3 under /youtube/v3/ to programs that
hold a token of ingest tokens add in place of a key: the official clients
(Go, Python, Node) and curl work unchanged but for the address and the
token (docs/howto/share-one-key.md). Each call is sent to the upstream
(--youtube-endpoint) with YOUTUBE_API_KEY, which no client sees, after the
limiter the daemon spends through admitted it and the ledger recorded it
with its client: the clients and the daemon draw from one quota, to the
unit. A call the limiter refuses is never sent and never charged; it is
answered in the upstream's own error shape (403 quotaExceeded while a pool
is spent until the upstream's reset, 429 rateLimitExceeded when it frees
sooner) with Retry-After and the RateLimit fields, which each official
client raises as its usual quota error. Only the operations costs.yaml
prices are forwarded, by GET; anything else is refused unsent. The API's
discovery document is served at /discovery/v1/apis/youtube/v3/rest with the
proxy's address as its root, for Python's client.

A client is a token of ingest tokens add; its plan in --api-plans (the
read API's plans file) says, in its proxy: section, what it may spend: a
daily share of each pool (daily:, per day of the upstream's), the dearest
call it may make (max_cost:, 1 unit unless set) and the operations granted
beyond it (grants:). Whatever the plans, the daemon comes first: what the
plan the daemon published needs for its tier-1 charts is kept from every
client, in a pool's window over the next whole window and in its day until
the reset, and each pool's reserve stays out of reach of all, as the limiter
holds it for every caller. When what is left to clients runs
low, a plan of a later priority (priority:, 0 first) spends a pool only down
to the daily shares of the plans before it (docs/api.md, "The proxy").

On SIGINT or SIGTERM the proxy stops taking calls; the calls in flight are
answered (and charged) first.`,
		Example: `  ingest tokens add notebook --plan standard      # give the token to the notebook's owner
  YOUTUBE_API_KEY=... ingest proxy --db ingest.db --listen 127.0.0.1:8081
  curl 'http://127.0.0.1:8081/youtube/v3/videos?part=snippet&chart=mostPopular&regionCode=US&key=TOKEN'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.listenFrom = envflag.Given(cmd.Flags().Lookup("listen"))
			return runProxy(cmd.Context(), s, f)
		},
	}
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:8081", "address to serve the API on, host:port")
	cmd.Flags().StringVar(&f.apiPlans, "api-plans", "", "plans file of the tokens, whose proxy: sections give each client its budget (see docs/api.md)")
	envflag.With(cmd.Flags().Lookup("api-plans"), apiPlansEnv)
	return cmd
}

func runProxy(ctx context.Context, s *settings, f *proxyFlags) error {
	if err := checkListen(f.listenFrom, f.listen); err != nil {
		return err
	}
	plans, err := loadAPIPlans(f.apiPlans)
	if err != nil {
		return err
	}
	key, err := apiKey()
	if err != nil {
		return err
	}
	h, closeFn, err := s.host().OpenProxy(ctx, wiring.Proxy{APIKey: key, QuotaKey: s.resolveQuotaKey(key), Plans: plans})
	if err != nil {
		return err
	}
	defer closeFn()
	return s.host().Serve(ctx, f.listen, h)
}
