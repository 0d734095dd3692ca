package web

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"

	"github.com/ingestworks/ingest/web/transport"
)

// Caps on what one request may ask for.
const (
	maxSearchLimit = 50
	// searchWindow is how deep a search can page: the store ranks a
	// window of hits and a cursor walks it.
	searchWindow  = 500
	maxChartLimit = 200
	maxRunsLimit  = 200
	maxQueryLen   = 200
	// maxHistory is how many trending entries a video answer carries,
	// the newest.
	maxHistory = 2000
)

// paramError is bad input: a 400 that names the parameter.
type paramError struct {
	param, msg string
}

func (e *paramError) Error() string { return e.param + ": " + e.msg }

func badParam(param, format string, args ...any) *paramError {
	return &paramError{param: param, msg: fmt.Sprintf(format, args...)}
}

// errorBody is the shape of every error the API answers.
type errorBody struct {
	Error apiErr `json:"error"`
}

type apiErr struct {
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Parameter string `json:"parameter,omitempty"`
	Message   string `json:"message"`
}

func apiError(w http.ResponseWriter, status int, code, param, msg string) {
	replyJSON(w, status, errorBody{apiErr{Status: status, Code: code, Parameter: param, Message: msg}})
}

func replyJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", transport.CacheFor(status))
	w.WriteHeader(status)
	sc := transport.TakeScratch()
	defer sc.GiveBack()
	if sc.Enc.Encode(v) == nil { // the status is sent: a failure here is the client gone
		w.Write(sc.Buf.Bytes())
	}
}

// limitParam reads a positive limit, def when absent, capped at most.
func limitParam(r *http.Request, def, most int) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, badParam("limit", "must be a whole number from 1 to %d, got %q", most, s)
	}
	return min(n, most), nil
}

var regionCode = regexp.MustCompile(`^[A-Z]{2}$`)

// regionParam reads a region code (two letters, any case); "" when absent
// and optional.
func regionParam(v string, required bool) (string, error) {
	v = strings.ToUpper(strings.TrimSpace(v))
	if v == "" && !required {
		return "", nil
	}
	if !regionCode.MatchString(v) {
		return "", badParam("region", "must be a two-letter region code such as US, got %q", v)
	}
	return v, nil
}

var categoryID = regexp.MustCompile(`^[0-9]{1,4}$`)

// categoryParam reads a video category as `ingest run --categories` takes
// it: an id (10) or a name (music); "", "0" and "all" are every category
// (the unfiltered chart), "".
func categoryParam(r *http.Request) (string, error) {
	v := strings.TrimSpace(r.URL.Query().Get("category"))
	switch {
	case v == "0":
		return "", nil
	case categoryID.MatchString(v):
		return v, nil
	}
	id, err := ingest.CategoryID(v)
	if err != nil {
		return "", badParam("category", "%v", err)
	}
	return id, nil
}

// chartLabel names a chart for people: US, or "US · music" for a category
// (its id when it has no name).
func chartLabel(region, category string) string {
	if category == "" {
		return region
	}
	return region + " · " + ingest.CategoryName(category)
}

// chartPath is a chart's page.
func chartPath(region, category string) string {
	if category == "" {
		return "/charts/" + region
	}
	return "/charts/" + region + "?category=" + url.QueryEscape(category)
}

// LocalMinute is the value of an input of type datetime-local: a time
// of day to the minute, with no zone (the dashboard's are UTC).
const LocalMinute = "2006-01-02T15:04"

// timeParam reads an RFC 3339 time, or a datetime-local one in UTC (to
// the minute: the end of that minute, so a run started in it is taken);
// zero when absent.
func timeParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(LocalMinute, v); err == nil {
		return t.Add(time.Minute - time.Millisecond), nil
	}
	if t, err := time.Parse(LocalMinute+":05", v); err == nil {
		return t.Add(time.Second - time.Millisecond), nil
	}
	return time.Time{}, badParam(name, "must be an RFC 3339 time such as 2026-11-21T09:00:00Z (or 2026-11-21T09:00, UTC), got %q", v)
}

func kindParam(r *http.Request) (ingest.PageKind, error) {
	switch v := r.URL.Query().Get("kind"); v {
	case "", string(ingest.Trending), string(ingest.Search):
		return ingest.PageKind(v), nil
	default:
		return "", badParam("kind", "must be trending or search, got %q", v)
	}
}

// Cursors are opaque to clients: a prefix says what they continue.
func encodeCursor(prefix string, n int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + ":" + strconv.FormatInt(n, 10)))
}

func decodeCursor(r *http.Request, prefix string) (int64, error) {
	v := r.URL.Query().Get("cursor")
	if v == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	rest, ok := strings.CutPrefix(string(raw), prefix+":")
	n, nerr := strconv.ParseInt(rest, 10, 64)
	if err != nil || !ok || nerr != nil || n < 0 {
		return 0, badParam("cursor", "not a cursor this list gave out; start again without it")
	}
	return n, nil
}

func stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// languageParam is ?language=: a BCP-47 tag (hi, en-US, zxx) a video's
// audio or text language must be, or narrow; "" none.
func languageParam(r *http.Request) (string, error) {
	l, err := store.Language(r.URL.Query().Get("language"))
	if err != nil {
		return "", badParam("language", "must be a BCP-47 language tag such as hi, en-US or zxx, got %q", r.URL.Query().Get("language"))
	}
	return l, nil
}
