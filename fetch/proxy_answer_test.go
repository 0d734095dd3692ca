package fetch

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
)

// A proxy in front answers with its own status and an HTML page, no error
// of the API's: the error names the status's text and says whose answer it
// is, and the statuses worth a retry are retried.
func TestAProxysAnswerIsNamedAndRetried(t *testing.T) {
	page := "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
	for _, tc := range []struct {
		status    int
		transient bool
	}{
		{500, true}, {502, true}, {504, true}, {429, true}, {408, true}, {404, false},
	} {
		ge := &googleapi.Error{Code: tc.status, Body: page, Header: http.Header{"Content-Type": {"text/html"}}}
		err := Classify("videos.list", ge, time.Unix(0, 0))
		var te *transientError
		if got := errors.As(err, &te); got != tc.transient {
			t.Errorf("HTTP %d: transient %t, want %t (%v)", tc.status, got, tc.transient, err)
		}
		want := http.StatusText(tc.status) + ", an answer that is no error of the API's (text/html): from a proxy or a gateway in front of it"
		if !strings.Contains(err.Error(), want) {
			t.Errorf("HTTP %d: %q, want it to say %q", tc.status, err, want)
		}
	}
	// the API's own error keeps its message
	api := &googleapi.Error{Code: 503, Message: "The service is currently unavailable.", Errors: []googleapi.ErrorItem{{Reason: "backendError"}}}
	if err := Classify("videos.list", api, time.Unix(0, 0)); !strings.Contains(err.Error(), "HTTP 503 backendError: The service is currently unavailable.") {
		t.Errorf("the API's 503: %q", err)
	}
}
