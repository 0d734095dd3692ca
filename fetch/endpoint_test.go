package fetch_test

import (
	"strings"
	"testing"

	"github.com/ingestworks/ingest/fetch"
)

// An endpoint is named in messages without its password, and the default
// (none given) as Google's.
func TestEndpointNameHidesThePassword(t *testing.T) {
	for _, c := range []struct{ endpoint, want string }{
		{"", "Google's endpoint"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
		{"https://user:s3cret@proxy.internal/youtube/v3/", "https://user:xxxxx@proxy.internal/youtube/v3/"},
	} {
		got := fetch.EndpointName(c.endpoint)
		if strings.Contains(got, "s3cret") || (c.want != "" && got != c.want) {
			t.Errorf("EndpointName(%q) = %q, want %q", c.endpoint, got, c.want)
		}
	}
}
