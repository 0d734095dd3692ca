package quota_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
)

// TestDialRefusesWhatIsNotARedisURL: a --redis that is not a Redis URL by
// its scheme is a configuration error naming the flag and the fix, with
// the password masked; a Redis URL gives a client.
func TestDialRefusesWhatIsNotARedisURL(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string // want "" for a client
	}{
		{"not a URL", "localhost:6379", "not a URL"},
		{"a colon short", "redis//:s3cret@localhost:6379/0", "lacks its colon"},
		{"a slash short", "redis:/localhost:6379/0", "takes two slashes"},
		{"another scheme", "postgres://:s3cret@localhost:5432/db", `the scheme "postgres" is not Redis's`},
		{"redis", "redis://:s3cret@localhost:6379/0", ""},
		{"a socket", "unix:///run/redis.sock", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := quota.Dial(tc.raw, "--redis")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Dial(%q): %v, want a client", tc.raw, err)
				}
				c.Close()
				return
			}
			var ce *ingest.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Dial(%q): %v, want a configuration error", tc.raw, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "--redis: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "s3cret") {
				t.Errorf("Dial(%q) = %q, want it to name --redis, say %q and hide the password", tc.raw, msg, tc.want)
			}
		})
	}
}

// TestHostNeverShowsThePassword: the host part of a Redis URL is its
// address alone.
func TestHostNeverShowsThePassword(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://:s3cret@cache.internal:6379/0":  "cache.internal:6379",
		"redis://user:s3cret@10.0.0.1:6380?db=2": "10.0.0.1:6380",
		"redis://localhost:6379":                 "localhost:6379",
	} {
		if got := quota.Host(raw); got != want {
			t.Errorf("Host(%q) = %q, want %q", raw, got, want)
		}
	}
}
