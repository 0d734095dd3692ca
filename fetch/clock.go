package fetch

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// The upstream's responses carry a Date header, set by its front end: a
// clock that no host of ours controls, and the one the quota's day follows.
// The transport hands it to Options.OnDate on every response, and
// UpstreamTime asks for it without spending anything.

// googleEndpoint is the API's base URL when Options.Endpoint is empty.
const googleEndpoint = "https://youtube.googleapis.com/"

// ClockBudget bounds a request for the upstream's time, on its own: it is
// no call, and is never asked within a call's delivery bound (Options.Prepare).
const ClockBudget = 10 * time.Second

// discoveryPath is the YouTube Data API's discovery document, below the
// endpoint's base.
const discoveryPath = "discovery/v1/apis/youtube/v3/rest"

// dateOf reads a response's Date header (zero when absent or unreadable).
func dateOf(res *http.Response) time.Time {
	t, err := http.ParseTime(res.Header.Get("Date"))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// UpstreamTime asks the upstream for its time: the API's discovery
// document on the endpoint's host (discoveryPath), sent without the key,
// which no project's YouTube quota is charged for, where every Data API
// request, an invalid one included, costs a unit. Its answer's Date header
// is the upstream's clock, to the second, whatever its status.
func (c *Client) UpstreamTime(ctx context.Context) (time.Time, error) {
	return askTime(ctx, c.bare, c.endpoint)
}

// UpstreamTime is Client.UpstreamTime without a client: base is
// --youtube-endpoint ("" for Google's).
func UpstreamTime(ctx context.Context, base string) (time.Time, error) {
	return UpstreamTimeVia(ctx, base, nil)
}

// UpstreamTimeVia is UpstreamTime through rt (nil: the network's).
func UpstreamTimeVia(ctx context.Context, base string, rt http.RoundTripper) (time.Time, error) {
	ep := googleEndpoint
	if base != "" {
		var err error
		if ep, err = endpoint(base); err != nil {
			return time.Time{}, err
		}
	}
	return askTime(ctx, &http.Client{Transport: rt, Timeout: ClockBudget}, ep)
}

func askTime(ctx context.Context, hc *http.Client, endpoint string) (time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+discoveryPath, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("ask the upstream's time: %w", err)
	}
	res, err := hc.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("ask the upstream's time: %w", err)
	}
	res.Body.Close()
	t := dateOf(res)
	if t.IsZero() {
		return t, fmt.Errorf("ask the upstream's time: its answer (%s) has no Date header", res.Status)
	}
	return t, nil
}
