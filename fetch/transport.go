package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxBody bounds what one response may hold in memory (a page of 50 videos
// is about 100 KB).
const maxBody = 32 << 20

// aborting is the transport to the upstream: a call the worker gives up on
// (its attempt's timeout, a stop) can never reach the upstream after, so
// that every call the upstream charges arrives within the attempt's bound
// of its admission (docs/explanation/quota.md, "A call's delivery"). Giving up closes
// the request's connection; with linger 0 the close is a reset, which
// drops what the kernel still held to send (a request stuck behind a cut
// link), where a plain close would send it once the link is back. One
// request per connection at a time (HTTP/1.1): with HTTP/2 a request given
// up ends only its stream, and the connection still delivers the request.
func aborting() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			if err := tc.SetLinger(0); err != nil {
				c.Close()
				return nil, err
			}
		}
		return c, nil
	}
	t.ForceAttemptHTTP2 = false
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	return t
}

// keyTransport adds the API key to every request, and asks for the answer
// gzipped (askGzip), which it decodes itself. option.WithHTTPClient
// drops option.WithAPIKey, so the key has to be added here; it is added to a
// clone, never to the caller's request, so that the URL the http.Client
// reports in its errors never holds it.
type keyTransport struct {
	base   http.RoundTripper
	key    string
	onDate func(context.Context, time.Time) // Options.OnDate
}

// decodeKey marks a context whose successful answer the transport decodes
// itself, once, into the value it was given (withDecode): the Go structs
// cannot tell an absent count from zero, and the answer decoded a second
// time into them would only be garbage. The Google client gets an empty
// object in its place; it still sends the call, checks its status and
// reads an error's body, which are left as they came but decoded.
type decodeKey struct{}

type decoding struct {
	into any
	err  error // the decode's: a body cut short or garbled is malformed
}

func withDecode(ctx context.Context, into any) (context.Context, *decoding) {
	d := &decoding{into: into}
	return context.WithValue(ctx, decodeKey{}, d), d
}

// emptyAnswer is what the Google client decodes of an answer the
// transport decoded.
const emptyAnswer = "{}"

// answerBufs hold an answer's bytes while it is decoded: every call's
// answer is about the size of the last, and the decoder copies what it
// keeps, so a buffer serves the next call rather than become garbage.
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (t *keyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	q := r.URL.Query()
	q.Set("key", t.key)
	r.URL.RawQuery = q.Encode()
	askGzip(r)
	res, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, redactErr(err, t.key)
	}
	if d := dateOf(res); t.onDate != nil && !d.IsZero() {
		t.onDate(req.Context(), d)
	}
	d, decode := req.Context().Value(decodeKey{}).(*decoding)
	decode = decode && res.StatusCode/100 == 2
	if !decode && !gzipped(res) {
		return res, nil
	}
	buf := answerBufs.Get().(*bytes.Buffer)
	defer answerBufs.Put(buf)
	buf.Reset()
	// One byte past the bound, so that a reader of the whole answer
	// (Forward) can tell one too large from one that fits.
	err = readAnswer(buf, res, maxBody+1)
	res.Body.Close()
	if err != nil {
		return nil, redactErr(err, t.key)
	}
	if decode {
		d.err = decodeAnswer(buf.Bytes(), d.into)
		res.Body, res.ContentLength = io.NopCloser(strings.NewReader(emptyAnswer)), int64(len(emptyAnswer))
		return res, nil
	}
	b := bytes.Clone(buf.Bytes())
	res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return res, nil
}

// redacted is an error whose text had the API key in it. It keeps the
// original for errors.Is/As but prints the cleaned text.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// redactErr removes the key from err's text, and from a *url.Error's URL,
// whatever layer put it there.
func redactErr(err error, key string) error {
	if err == nil || key == "" {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redactURL(ue.URL, key)
	}
	if msg := err.Error(); strings.Contains(msg, key) || strings.Contains(msg, url.QueryEscape(key)) {
		msg = strings.ReplaceAll(msg, key, "REDACTED")
		return &redacted{msg: strings.ReplaceAll(msg, url.QueryEscape(key), "REDACTED"), err: err}
	}
	return err
}

func redactURL(s, key string) string {
	u, err := url.Parse(s)
	if err != nil || !u.Query().Has("key") {
		return strings.ReplaceAll(s, key, "REDACTED")
	}
	q := u.Query()
	q.Set("key", "REDACTED")
	u.RawQuery = q.Encode()
	return u.String()
}
