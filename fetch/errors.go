package fetch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/ingestworks/ingest"
)

// transientError is an attempt that may succeed if tried again: a 5xx, a
// short-term rate limit, a network failure.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// ErrMalformed says that the upstream answered 2xx with a body that is not
// the JSON it promised. Nothing of that page is returned; the attempt is
// retried.
var ErrMalformed = errors.New("malformed response from the upstream")

// htmlTag matches the markup some messages carry ("your <a href=...>quota</a>").
var htmlTag = regexp.MustCompile(`<[^>]*>`)

// keyReasons are the reasons, in errors[] or in an ErrorInfo detail, that
// say the key itself is refused: retrying cannot help.
var keyReasons = map[string]bool{
	"keyInvalid": true, "keyExpired": true, "accessNotConfigured": true, "forbidden": true,
	"ipRefererBlocked": true, "API_KEY_INVALID": true, "API_KEY_EXPIRED": true,
	"API_KEY_SERVICE_BLOCKED": true, "API_KEY_HTTP_REFERRER_BLOCKED": true,
	"API_KEY_IP_ADDRESS_BLOCKED": true, "API_KEY_ANDROID_APP_BLOCKED": true,
	"API_KEY_IOS_APP_BLOCKED": true, "SERVICE_DISABLED": true, "CONSUMER_INVALID": true,
}

var transientReasons = map[string]bool{
	"backendError": true, "internalError": true, "rateLimitExceeded": true,
	"userRateLimitExceeded": true, "RATE_LIMIT_EXCEEDED": true,
}

// Classify turns what one attempt of op returned into the error the caller
// acts on: a *ingest.QuotaExhaustedError when the upstream says its quota
// is spent, ingest.ErrBadKey, ingest.ErrNoChart, or another. now is when
// the attempt ended, for the upstream's reset time. The proxy reads the
// answers it forwards by it, so that a client's call that meets the spent
// quota blocks the pools as a job's does.
func Classify(op string, err error, now time.Time) error {
	var ge *googleapi.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ge):
		return classifyAPI(op, ge, now)
	case isDecodeError(err):
		// A body cut short or garbled on the way is retried as a 5xx is:
		// the next answer is most often whole.
		return &transientError{fmt.Errorf("%w: %v", ErrMalformed, err)}
	case errors.Is(err, ErrMalformed):
		// Found by the transport (an answer that says gzip and is not):
		// named by itself, without the request the http.Client prefixes.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &transientError{err}
	case isNetwork(err):
		return &transientError{err}
	}
	return err
}

func classifyAPI(op string, ge *googleapi.Error, now time.Time) error {
	reasons := apiReasons(ge)
	msg := htmlTag.ReplaceAllString(ge.Message, "")
	if msg == "" && len(ge.Errors) == 0 {
		msg = notTheAPIs(ge)
	}
	perDay := strings.Contains(strings.ToLower(msg+" "+itemMessages(ge)), "per day")
	switch {
	case reasons["quotaExceeded"] || reasons["dailyLimitExceeded"]:
		return &ingest.QuotaExhaustedError{Op: op, Reset: ingest.UpstreamReset(now), Message: msg}
	case perDay && (ge.Code == 429 || reasons["rateLimitExceeded"] || reasons["RATE_LIMIT_EXCEEDED"]):
		return &ingest.QuotaExhaustedError{Op: op, PerMethod: true, Reset: ingest.UpstreamReset(now), Message: msg}
	case reasons["videoChartNotFound"]:
		return fmt.Errorf("%w: %s", ingest.ErrNoChart, msg)
	case reasons["invalidPageToken"]:
		return fmt.Errorf("%w: %s", ingest.ErrInvalidPageToken, msg)
	case badKey(ge, reasons):
		// ErrBadKey's text names YOUTUBE_API_KEY, what the user must fix.
		return fmt.Errorf("%w (HTTP %d %s): %s", ingest.ErrBadKey, ge.Code, firstReason(ge), msg)
	case ge.Code >= 500 || ge.Code == 429 || ge.Code == 408 || anyOf(reasons, transientReasons):
		return &transientError{fmt.Errorf("HTTP %d %s: %s", ge.Code, firstReason(ge), msg)}
	}
	return fmt.Errorf("HTTP %d %s: %s", ge.Code, firstReason(ge), msg)
}

// notTheAPIs says what an error answer is whose body holds no error of the
// API's, where the API's message would be: its status's text and its type.
// A proxy or a gateway in front sends such a page (its own 502, 504 or
// 429), and an operator reading only "HTTP 502" looks at the upstream's
// status page rather than at YOUTUBE_ENDPOINT's proxy.
func notTheAPIs(ge *googleapi.Error) string {
	what := "no error of the API's"
	if ct := ge.Header.Get("Content-Type"); ct != "" {
		what += " (" + ct + ")"
	}
	return http.StatusText(ge.Code) + ", an answer that is " + what + ": from a proxy or a gateway in front of it"
}

// badKey says whether the upstream refuses the key. 401 means no usable
// credentials; a 400 whose message is about the key counts too, for bodies
// without an ErrorInfo detail.
func badKey(ge *googleapi.Error, reasons map[string]bool) bool {
	if ge.Code == 401 || anyOf(reasons, keyReasons) {
		return true
	}
	return ge.Code == 400 && strings.Contains(strings.ToLower(ge.Message), "api key")
}

// apiReasons gathers the reasons of errors[] and of every ErrorInfo detail.
// The details are read from the parsed body and, failing that, from the raw
// body, since gax's APIError.Reason reads only ErrorInfo.
func apiReasons(ge *googleapi.Error) map[string]bool {
	out := map[string]bool{}
	for _, it := range ge.Errors {
		out[it.Reason] = true
	}
	for _, d := range ge.Details {
		if m, ok := d.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok {
				out[r] = true
			}
		}
	}
	var raw struct {
		Error struct {
			Details []struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &raw) == nil {
		for _, d := range raw.Error.Details {
			out[d.Reason] = true
		}
	}
	if strings.Contains(ge.Body, "API_KEY_INVALID") {
		out["API_KEY_INVALID"] = true
	}
	delete(out, "")
	return out
}

func itemMessages(ge *googleapi.Error) string {
	var b strings.Builder
	for _, it := range ge.Errors {
		b.WriteString(it.Message)
		b.WriteByte(' ')
	}
	return b.String()
}

func firstReason(ge *googleapi.Error) string {
	if len(ge.Errors) > 0 {
		return ge.Errors[0].Reason
	}
	return ""
}

func anyOf(have, want map[string]bool) bool {
	for r := range have {
		if want[r] {
			return true
		}
	}
	return false
}

func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	// A bad ",string" count is a plain error from encoding/json.
	return errors.As(err, &se) || errors.As(err, &te) || strings.HasPrefix(err.Error(), "json: ")
}

// isNetwork says whether the attempt failed on the way: *url.Error (what
// http.Client returns for any transport failure) is a net.Error, and a body
// cut short ends in an unexpected EOF or a reset.
func isNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
