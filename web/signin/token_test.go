package signin

import (
	"strings"
	"testing"
)

// TestCheckToken: an access token has at least MinTokenLen characters
// (not bytes) and MinTokenBits as TokenBits estimates them, and no space
// around it; a repeat, a run or one kind of character counts for little;
// NewToken's and random hex pass.
func TestCheckToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		token string
		want  string // in the error; "" for none
	}{
		{"", "it has 0 characters, want at least 20"},
		{"s3cret", "it has 6 characters"},
		{"Nineteen-chars-0123", "it has 19 characters"},
		{"ééééééééééabcdefghi", "it has 19 characters"},
		{"12345678901234567890", "bits of entropy, want at least 128"},
		{"abcdefghijklmnopqrstuvwxyz", "bits of entropy"},
		{"-_-_-_-_-_-_-_-_-_-_-_-_", "bits of entropy"},
		{"aaaaaaaaaaaaaaaaaaa1", "about 10 bits of entropy"},
		{"Passwordpassword1234", "about 65 bits of entropy"},
		{"correcthorsebatterystaple", "bits of entropy"},
		{"0123456789abcdef0123456789abcdef", "bits of entropy"},
		{" 3f9a1c27d84be605f1e2a9c3b7d6e048", "white space"},
		{"3f9a1c27d84be605f1e2a9c3b7d6e048\n", "white space"},
		{"3f9a1c27d84be605\tf1e2a9c3b7d6e048", "control character"},
		{"3f9a1c27d84be605f1e2a9c3b7d6e048", ""}, // openssl rand -hex 16
		{"q8Yx2VbR0mZc7LwK5tHn1JdA4sGf9PeU", ""}, // openssl rand -base64 24
		{"ui-token-for-tests-Of-2026", ""},
	} {
		err := CheckToken(tc.token)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckToken(%q) = %v, want %q", tc.token, err, tc.want)
		}
	}
	seen := map[string]bool{}
	for range 100 {
		tok := NewToken()
		if err := CheckToken(tok); err != nil || seen[tok] || len(tok) != 43 {
			t.Fatalf("NewToken() = %q: %v, seen before %v; want 43 characters, new, taken", tok, err, seen[tok])
		}
		seen[tok] = true
	}
}
