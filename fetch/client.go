// Package fetch is the YouTube Data API v3 client: the real
// google.golang.org/api/youtube/v3 service behind the small interfaces the
// jobs need (jobs.Source, jobs.Searcher, and Stats for
// videos.batchGetStats), with the things the generated client leaves to us:
// the quota gate before every attempt, retries with jittered backoff, the
// classification of upstream errors into the kinds the jobs act on
// (ingest.QuotaExhaustedError, ingest.ErrBadKey, ingest.ErrNoChart,
// ingest.ErrInvalidPageToken), hidden counts kept apart from zero, each
// answer asked for only what is kept of it (fields=, from ingest.Keeps)
// and gzipped on the wire, read with an inflater reused (gzip.go) and
// decoded once (decode.go), and an API key that never shows in an error or
// a log line.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
)

// pageSize is the largest page the API serves, and the most ids one
// videos.list call takes.
const pageSize = 50

// maxBackoff caps one wait between attempts.
const maxBackoff = 30 * time.Second

// Options configure a Client.
type Options struct {
	// Endpoint is the API's base URL; "" is Google's. A trailing slash is
	// added when missing (the client keeps a path prefix only with one).
	Endpoint string
	// APIKey is YOUTUBE_API_KEY. It is sent as the key query parameter and
	// never appears in errors or logs.
	APIKey string
	// HTTPClient, if set, gives the base transport and timeout.
	HTTPClient *http.Client
	// MaxAttempts bounds the attempts of one call, the first included
	// (default 4). Every attempt passes the gate.
	MaxAttempts int
	// Backoff is the base wait before a retry (default 500ms); it doubles
	// with every attempt, jittered, capped at 30s.
	Backoff time.Duration
	Logger  *slog.Logger
	// OnDate, if set, receives the Date header of every response the
	// upstream sends (clock.go).
	OnDate func(ctx context.Context, upstream time.Time)
	// Now is the house clock pages are stamped with as they are fetched;
	// required.
	Now func() time.Time
	// Prepare, if set, runs before each attempt's delivery bound starts:
	// what the gate needs that is no part of the call, the upstream's
	// clock read by a request of its own within its own budget
	// (ClockBudget), so that a slow upstream's clock read never spends
	// the call's bound, nor gets the call charged and tried again.
	Prepare func(ctx context.Context)
	// Jitter, if set, draws a retry's jitter: a number in [0, n). Nil is
	// math/rand's. The simulation draws from its seed, so that a seed
	// replays the same waits.
	Jitter func(n int64) int64
}

// Client calls the YouTube Data API v3. It is safe for concurrent use.
type Client struct {
	svc         *youtube.Service
	key         string
	maxAttempts int
	backoff     time.Duration
	log         *slog.Logger
	now         func() time.Time
	prepare     func(context.Context)
	jitter      func(int64) int64 // Options.Jitter
	endpoint    string            // the API's base URL, with its slash
	bare        *http.Client      // no key: UpstreamTime's
	keyed       *http.Client      // with the key: Forward's
}

// New returns a client for opts. It makes no request.
func New(ctx context.Context, opts Options) (*Client, error) {
	if opts.APIKey == "" {
		return nil, errors.New("fetch: YOUTUBE_API_KEY is empty")
	}
	if opts.Now == nil {
		return nil, errors.New("fetch: Options.Now is required: the house's clock")
	}
	c := &Client{key: opts.APIKey, maxAttempts: opts.MaxAttempts, backoff: opts.Backoff,
		log: opts.Logger, now: opts.Now, prepare: opts.Prepare, jitter: opts.Jitter}
	c.defaults()
	base := http.RoundTripper(aborting())
	if b := opts.HTTPClient; b != nil && b.Transport != nil {
		base = b.Transport
	}
	hc := &http.Client{Transport: &keyTransport{base: base, key: opts.APIKey, onDate: opts.OnDate}, Timeout: 60 * time.Second}
	c.bare = &http.Client{Transport: base, Timeout: ClockBudget}
	c.keyed = hc
	c.endpoint = googleEndpoint
	if b := opts.HTTPClient; b != nil {
		hc.CheckRedirect, hc.Jar = b.CheckRedirect, b.Jar
		if b.Timeout > 0 {
			hc.Timeout = b.Timeout
		}
	}
	o := []option.ClientOption{option.WithHTTPClient(hc)}
	if opts.Endpoint != "" {
		ep, err := endpoint(opts.Endpoint)
		if err != nil {
			return nil, err
		}
		o = append(o, option.WithEndpoint(ep))
		c.endpoint = ep
	}
	svc, err := youtube.NewService(ctx, o...)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", redactErr(err, opts.APIKey))
	}
	c.svc = svc
	return c, nil
}

func (c *Client) defaults() {
	if c.maxAttempts <= 0 {
		c.maxAttempts = 4
	}
	if c.backoff <= 0 {
		c.backoff = 500 * time.Millisecond
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
}

// EndpointName is an endpoint (YOUTUBE_ENDPOINT) as messages show it: its
// password masked, as a database's and Redis's are; "Google's endpoint"
// for "", the default.
func EndpointName(endpoint string) string {
	if endpoint == "" {
		return "Google's endpoint"
	}
	return ingest.Redact(endpoint)
}

// endpoint checks an endpoint URL and ensures its trailing slash.
func endpoint(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The value is not quoted: it may hold a password (cmd prints it
		// redacted before it gets here).
		return "", errors.New("fetch: youtube endpoint: want an http or https URL")
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s, nil
}

// call runs one operation: the gate before every attempt (the upstream
// charges failed attempts too), the attempt, and retries of transient
// failures. Quota exhaustion, a refused key and every other answer are
// returned at once.
func (c *Client) call(ctx context.Context, gate ingest.Gate, op string, attempt func(context.Context) error) error {
	var failed error // the attempt before, which this one tries again
	var waited time.Duration
	for n := 1; ; n++ {
		if c.prepare != nil && gate != nil {
			c.prepare(ctx)
		}
		// The attempt's bound runs from before the limiter is asked, so
		// that the upstream can receive the call no later than
		// ingest.Delivery after its admission (docs/explanation/quota.md, "A call's
		// delivery"): at the bound the request's connection is reset.
		actx, cancel := context.WithTimeout(ctx, ingest.Delivery)
		giveBack := ingest.NoGiveBack
		if gate != nil {
			var err error
			if giveBack, err = gate(actx, op); err != nil {
				cancel()
				return err
			}
		}
		if failed != nil {
			// Said once the retry is let through: a stop refuses it at the
			// gate, and then no retry follows to be announced.
			c.log.Warn("upstream attempt failed; retrying", ingest.LogOp, op, "attempt", n-1, "delay", waited, ingest.LogErr, failed)
		}
		raw := attempt(actx)
		cancel()
		if neverSent(raw) {
			// The upstream never saw it, so it charged nothing: neither do we.
			if gerr := giveBack(context.WithoutCancel(ctx)); gerr != nil {
				c.log.Warn("give back the units of a call that never reached the upstream", ingest.LogOp, op, ingest.LogErr, gerr)
			}
		}
		err := redactErr(Classify(op, raw, c.now()), c.key)
		// A per-attempt timeout of the http.Client is transient.
		var te *transientError
		if err == nil || !errors.As(err, &te) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			// A retry was due, and the ctx's end is why none is made: the
			// caller tells a stop from a failure by it.
			return stopped(cerr, err)
		}
		if n >= c.maxAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", n, err)
		}
		d := c.delay(n)
		failed, waited = err, d
		if err := ingest.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// stopped is the error of a call whose ctx ended while its last attempt
// failed for a reason worth a retry: both, the ctx's first.
func stopped(cerr, last error) error {
	if errors.Is(last, cerr) {
		return last
	}
	return fmt.Errorf("%w (the last attempt: %w)", cerr, last)
}

// neverSent tells an attempt that provably never reached the upstream: the
// connection was refused or the name did not resolve, before any byte of
// the request went out.
func neverSent(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}

// delay is the jittered exponential wait after attempt n: between half and
// all of base x 2^(n-1), capped.
func (c *Client) delay(n int) time.Duration {
	d := c.backoff << min(n-1, 20)
	if d <= 0 || d > maxBackoff {
		d = maxBackoff
	}
	if c.jitter != nil {
		return d/2 + time.Duration(c.jitter(int64(d/2+1)))
	}
	return d/2 + rand.N(d/2+1)
}
