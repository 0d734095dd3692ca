package ingest

import (
	"strings"
	"testing"
)

// Sentinels around each secret of a fuzzed URL, found nowhere else: no
// output of Redact may hold either end of a password or of a query's key.
const (
	passHead, passTail = "Pw7q", "Qz4w"
	keyHead, keyTail   = "Ky3j", "Jx8k"
)

// FuzzRedact builds a setting from a shape (a scheme as written, typed
// well or not), a user, a password, a host and a query's key, and holds
// Redact to printing no end of the password or the key, whatever the
// fuzzer puts in each. Its seeds are the shapes operators were seen to
// type, and run as a test of their own.
func FuzzRedact(f *testing.F) {
	for _, seed := range []struct{ prefix, user, pass, host, query string }{
		{"", "user", "", "host:1", ""},
		{"http//", "u", "", "h", ""},
		{"http:/", "u", "", "h", ""},
		{"http:", "u", "", "h", ""},
		{"postgres//", "u", "", "h/db", ""},
		{"postgres:/", "u", "", "h/db", ""},
		{"postgres://", "u", "", "h/db", "sslmode=disable&password="},
		{"postgresql//", "u", "@x", "h:5432/db", ""},
		{"http://", "", "", "127.0.0.1:1/", "key="},
		{"http://", "u", "a?b", "h/", "a=b&key="},
		{"https://", "u", "", "h/", "#key="},
		{"http//", "u", "p#q", "h/", "key="},
		{"redis://", "", "", "h:6379/0", "addr=h2:1&password="},
		{"redis//", "", "a/b", "h:6379/0", ""},
		{"rediss:", "", "", "h/0", "key="},
		{"Redis://", "", "%zz", "h/0", ""},
		{"1http://", "u", "", "h", ""},
		{"http://", "u", "", "h/path@x/", "key="},
		{"", "", "", "h", "key="},
		{"http://", "u", "", "h/", "key=a@"},
	} {
		f.Add(seed.prefix, seed.user, seed.pass, seed.host, seed.query)
	}
	f.Fuzz(func(t *testing.T, prefix, user, pass, host, query string) {
		for _, s := range []string{prefix, user, pass, host, query} {
			for _, sentinel := range []string{passHead, passTail, keyHead, keyTail} {
				if strings.Contains(s, sentinel) {
					t.Skip("a part holds a sentinel")
				}
			}
		}
		last := query[strings.LastIndex(query, "&")+1:]
		if name, _, ok := strings.Cut(last, "="); ok && shownParams[strings.ToLower(name)] {
			t.Skip("the key is the value of a parameter that names where a server is")
		}
		raw := prefix + user + ":" + passHead + pass + passTail + "@" + host
		if query != "" {
			raw += "?" + query + keyHead + keyTail
		}
		got := Redact(raw)
		for _, secret := range []string{passHead, passTail, keyHead, keyTail} {
			if strings.Contains(got, secret) {
				t.Fatalf("Redact(%q) = %q: holds %q", raw, got, secret)
			}
		}
	})
}
