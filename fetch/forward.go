package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"google.golang.org/api/googleapi"

	"github.com/ingestworks/ingest"
)

// ErrTooLarge: the upstream's answer is over what one answer may hold in
// memory; the call was sent, and charged.
var ErrTooLarge = errors.New("the upstream's answer is too large")

// Answer is the upstream's answer to a forwarded call, as it may be handed
// on: its status, the headers a client reads of it, its body with the key
// taken out wherever the upstream echoed it, and, for an error answer,
// what it means (Classify's reading: a *ingest.QuotaExhaustedError when
// the upstream's quota is spent).
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

// answerHeaders are the upstream's headers a forwarded answer keeps: what
// describes the body and its caching, never a hop's nor a cookie.
var answerHeaders = []string{"Content-Type", "Date", "Etag", "Cache-Control", "Expires", "Last-Modified", "Vary"}

// Forward sends one call of op (an operation of the registry, at its
// path) with query, the client's own parameters less any key, through
// gate, as every call of the worker goes: the limiter is asked first, the
// call is bounded by ingest.Delivery from before it asks, and a call that
// never reached the upstream is given back. It is tried once: a client
// that retries asks again, and is metered again. The key is the client's
// (Options.APIKey), never the caller's. err is the gate's refusal
// (*ingest.RefusedError) or a call that got no answer.
func (c *Client) Forward(ctx context.Context, gate ingest.Gate, op string, query url.Values) (Answer, error) {
	o, ok := ingest.OperationNamed(op)
	if !ok {
		return Answer{}, fmt.Errorf("forward %s: no such operation", op)
	}
	actx, cancel := context.WithTimeout(ctx, ingest.Delivery)
	defer cancel()
	giveBack, err := gate(actx, op)
	if err != nil {
		return Answer{}, err
	}
	q := url.Values{}
	for k, v := range query {
		if k != "key" {
			q[k] = v
		}
	}
	req, err := http.NewRequestWithContext(actx, http.MethodGet, c.endpoint+"youtube/v3/"+o.Path+"?"+q.Encode(), nil)
	if err != nil {
		return Answer{}, fmt.Errorf("forward %s: %w", op, err)
	}
	res, err := c.keyed.Do(req)
	if neverSent(err) {
		if gerr := giveBack(context.WithoutCancel(ctx)); gerr != nil {
			c.log.Warn("give back the units of a call that never reached the upstream", ingest.LogOp, op, ingest.LogErr, gerr)
		}
	}
	if err != nil {
		return Answer{}, fmt.Errorf("forward %s: %w", op, redactErr(err, c.key))
	}
	defer res.Body.Close()
	return c.answer(op, res)
}

// answer reads res, within maxBody, into what may be handed on.
func (c *Client) answer(op string, res *http.Response) (Answer, error) {
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		return Answer{}, fmt.Errorf("forward %s: read the answer: %w", op, redactErr(err, c.key))
	}
	if len(b) > maxBody {
		return Answer{}, fmt.Errorf("forward %s: %w (over %d bytes)", op, ErrTooLarge, maxBody)
	}
	b = scrub(b, c.key)
	a := Answer{Status: res.StatusCode, Header: http.Header{}, Body: b}
	for _, h := range answerHeaders {
		if v := res.Header.Values(h); len(v) > 0 {
			a.Header[h] = v
		}
	}
	if res.StatusCode >= 300 {
		res.Body = io.NopCloser(bytes.NewReader(b))
		a.Err = Classify(op, googleapi.CheckResponse(res), c.now())
	}
	return a, nil
}

// scrub takes key out of b, as it is and as a URL's query writes it: an
// upstream may echo the request it refused.
func scrub(b []byte, key string) []byte {
	if key == "" {
		return b
	}
	for _, k := range []string{key, url.QueryEscape(key)} {
		b = bytes.ReplaceAll(b, []byte(k), []byte("REDACTED"))
	}
	return b
}

// Discovery fetches the API's discovery document from the upstream,
// without the key: the upstream meters it against no quota, so neither
// does the worker.
func (c *Client) Discovery(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+discoveryPath, nil)
	if err != nil {
		return nil, fmt.Errorf("discovery document: %w", err)
	}
	res, err := c.bare.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discovery document: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("discovery document: the upstream answered %s", res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("discovery document: %w", err)
	}
	return b, nil
}
