package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ratelimit"
)

// Upstream is the upstream as the proxy calls it (*fetch.Client).
type Upstream interface {
	Forward(ctx context.Context, gate ingest.Gate, op string, query url.Values) (fetch.Answer, error)
	Discovery(ctx context.Context) ([]byte, error)
}

// Tokens finds a client by its token's hash (*clients.Clients).
type Tokens interface {
	TokenByHash(ctx context.Context, hash string) (clients.Token, bool, error)
}

// Proxy is the handler of `ingest proxy`.
type Proxy struct {
	limiter  jobs.Limiter
	quotaKey string
	costs    *ingest.Costs
	upstream Upstream
	tokens   Tokens
	clock    ingest.Clock
	opts     Options
	budgets  *budgets // nil: no plans, every token spends what the limiter admits

	mu        sync.Mutex
	discovery []byte // the upstream's document, once read
}

// Options are the proxy's tunables; the zero value is usable.
type Options struct {
	Logger *slog.Logger
	// Observe, when set, is told each call's outcome for its client
	// (Outcomes) and the units it took or asked.
	Observe func(client, outcome string, units int64)
	// Plans, when set, are the tokens' plans (their proxy: sections), which
	// Books and State read each client's budget for: a token whose plan
	// the file lacks is refused.
	Plans *ratelimit.APIPlans
	Books Books
	State func(context.Context) ([]ingest.PoolState, error)
}

// The outcomes of a client's call, as Options.Observe is told them.
const (
	OutcomeForwarded = "forwarded" // sent, and answered
	OutcomeRefused   = "refused"   // refused before it was sent: charged nothing
	OutcomeFailed    = "failed"    // sent, and no answer came: charged
)

// New returns the proxy over the limiter and ledger of quotaKey: every
// call is priced by costs, taken from l, and sent to up.
func New(l jobs.Limiter, quotaKey string, costs *ingest.Costs, up Upstream, tokens Tokens, clock ingest.Clock, opts Options) *Proxy {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{limiter: l, quotaKey: quotaKey, costs: costs, upstream: up, tokens: tokens, clock: clock, opts: opts}
	if opts.Plans != nil {
		p.budgets = &budgets{plans: opts.Plans, books: opts.Books, state: opts.State, costs: costs, quotaKey: quotaKey, clock: clock}
	}
	return p
}

// The paths the proxy answers.
const (
	apiPath       = "/youtube/v3/"
	DiscoveryPath = "/discovery/v1/apis/youtube/v3/rest"
)

// ServeHTTP answers one request of a client.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz":
		w.Write([]byte("ok\n"))
	case r.URL.Path == DiscoveryPath:
		p.serveDiscovery(w, r)
	case strings.HasPrefix(r.URL.Path, apiPath):
		p.serveCall(w, r)
	default:
		writeError(w, http.StatusNotFound, "global", "notFound", "ingest proxy: not found: the API is under "+apiPath)
	}
}

// operationAt is the registry's operation at path by method: the only
// calls the proxy forwards.
func operationAt(method, path string) (ingest.Operation, bool) {
	rest := strings.TrimSuffix(strings.TrimPrefix(path, apiPath), "/")
	for _, o := range ingest.Operations {
		if o.Path == rest && method == http.MethodGet {
			return o, true
		}
	}
	return ingest.Operation{}, false
}

func (p *Proxy) serveCall(w http.ResponseWriter, r *http.Request) {
	o, ok := operationAt(r.Method, r.URL.Path)
	if _, priced := p.costs.Operations[o.Name]; !ok || !priced {
		writeError(w, http.StatusForbidden, "global", "forbidden",
			"ingest proxy: "+r.Method+" "+r.URL.Path+" is no operation this proxy's costs file prices: it is not forwarded")
		return
	}
	tok, ok := p.client(w, r)
	if !ok {
		return
	}
	units := sum(p.costs.Operations[o.Name])
	gate := jobs.ClientGate(p.limiter, p.quotaKey, tok.Name)
	if p.budgets != nil {
		gate = p.budgets.gate(gate, tok.Name, tok.Plan)
	}
	ans, err := p.upstream.Forward(r.Context(), gate, o.Name, r.URL.Query())
	var refused *ingest.RefusedError
	var over *overBudget
	var denied *notGranted
	switch {
	case errors.As(err, &refused):
		p.observe(tok.Name, OutcomeRefused, units)
		refuse(w, limiterRefusal(p.costs, refused.Decision, p.clock.Now()), p.clock.Now())
		return
	case errors.As(err, &over):
		p.observe(tok.Name, OutcomeRefused, units)
		refuse(w, over.r, p.clock.Now())
		return
	case errors.As(err, &denied):
		p.observe(tok.Name, OutcomeRefused, units)
		writeError(w, http.StatusForbidden, "global", "forbidden", denied.msg)
		return
	case err != nil:
		p.fail(w, tok.Name, o.Name, units, err, true)
		return
	}
	p.observe(tok.Name, OutcomeForwarded, units)
	p.blockSpent(r.Context(), tok.Name, ans.Err)
	for k, v := range ans.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(ans.Status)
	w.Write(ans.Body)
}

// client is the token's client, or false once the request is answered as
// the upstream answers a missing or bad key.
func (p *Proxy) client(w http.ResponseWriter, r *http.Request) (clients.Token, bool) {
	token := r.URL.Query().Get("key")
	if token == "" {
		token = r.Header.Get("X-Goog-Api-Key")
	}
	if token == "" {
		writeError(w, http.StatusForbidden, "global", "forbidden",
			"ingest proxy: the request has no token: send the one `ingest tokens add` gave you where a key goes (key=)")
		return clients.Token{}, false
	}
	t, ok, err := p.tokens.TokenByHash(r.Context(), clients.TokenHash(token))
	if err != nil {
		p.opts.Logger.Warn("proxy: look up a token", ingest.LogErr, err)
		writeError(w, http.StatusServiceUnavailable, "global", "backendError", "ingest proxy: the tokens cannot be read now: retry")
		return clients.Token{}, false
	}
	if !ok {
		writeError(w, http.StatusBadRequest, "usageLimits", "keyInvalid",
			"ingest proxy: the token is unknown or revoked: ask the operator for one (ingest tokens add)")
		return clients.Token{}, false
	}
	if p.budgets != nil && !p.budgets.plans.Usable(t.Plan) {
		writeError(w, http.StatusForbidden, "global", "forbidden", fmt.Sprintf(
			"ingest proxy: the token's plan %q is not in this proxy's plans file: ask the operator to add the plan, or for a token on another plan", t.Plan))
		return clients.Token{}, false
	}
	return t, true
}

// blockSpent blocks the pools for every worker when the upstream said its
// quota is spent (err, the answer's reading), as a job's call does.
func (p *Proxy) blockSpent(ctx context.Context, client string, err error) {
	var exhausted *ingest.QuotaExhaustedError
	if !errors.As(err, &exhausted) {
		return
	}
	until, pools, berr := jobs.BlockSpent(context.WithoutCancel(ctx), p.limiter, p.costs, exhausted)
	if berr != nil {
		p.opts.Logger.Error("proxy: block the pools the upstream said spent", ingest.LogErr, berr)
		return
	}
	p.opts.Logger.Warn("proxy: the upstream said its quota is spent: pools blocked for every worker",
		"client", client, ingest.LogOp, exhausted.Op, "pools", pools, "until", until)
}

// fail answers a call that got no answer (sent: charged) or could not be
// decided (not sent: charged nothing).
func (p *Proxy) fail(w http.ResponseWriter, client, op string, units int64, err error, sent bool) {
	outcome := OutcomeRefused
	if sent && !errors.Is(err, ingest.ErrUnavailable) {
		outcome = OutcomeFailed
	}
	p.observe(client, outcome, units)
	p.opts.Logger.Warn("proxy: a call got no answer", "client", client, ingest.LogOp, op, ingest.LogErr, err)
	code, reason := http.StatusBadGateway, "backendError"
	if errors.Is(err, ingest.ErrUnavailable) {
		code = http.StatusServiceUnavailable
	}
	writeError(w, code, "global", reason, "ingest proxy: "+op+": "+err.Error())
}

func (p *Proxy) observe(client, outcome string, units int64) {
	if p.opts.Observe != nil {
		p.opts.Observe(client, outcome, units)
	}
}

func sum(charges []ingest.Charge) int64 {
	var n int64
	for _, c := range charges {
		n += c.Units
	}
	return n
}
