package ingest

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// password holds every character a URL reserves between pieces of
// letters found nowhere else in the URLs below.
const password = "Zqv@Jxw:Wkt/Vbr?Ypn#Qmd%Hdg"

var pieces = []string{"Zqv", "Jxw", "Wkt", "Vbr", "Ypn", "Qmd", "Hdg"}

func TestNoPieceOfAPasswordIsPrinted(t *testing.T) {
	encoded := url.UserPassword("ingest", password).String()
	for _, tc := range []struct {
		raw     string
		wantErr error
	}{
		{"postgres://ingest:" + password + "@db.example:5432/ingest?sslmode=require", ErrURLUnencoded},
		{"redis://:" + password + "@redis:6379/0", ErrURLUnencoded},
		{"redis://" + password + "@redis:6379/0", ErrURLUnencoded},
		{"postgres://ingest:Zqv%zzJxw@db.example/ingest", ErrURLUnencoded},
		{"postgres://ingest:Zqv/Jxw@db.example/ingest", ErrURLUnencoded},
		{"redis://:Zqv#Jxw@redis:6379/0", ErrURLUnencoded},
		{"redis://:Zqv:Jxw@redis:6379/0", nil},
		{"postgres://" + encoded + "@db.example:5432/ingest", nil},
		{"postgres://ingest@db.example/ingest?password=" + url.QueryEscape(password), nil},
		{"redis://:ZqvJxw@redis:port/0", ErrURLUnparsable},
	} {
		if err := CheckURL(tc.raw); !errors.Is(err, tc.wantErr) {
			t.Errorf("Check(%q) = %v, want %v", tc.raw, err, tc.wantErr)
		} else if err != nil {
			for _, p := range pieces {
				if strings.Contains(err.Error(), p) {
					t.Errorf("Check(%q) quotes %q: %v", tc.raw, p, err)
				}
			}
		}
		msg := Redact(tc.raw) + " " + Scrub("driver said: "+tc.raw, tc.raw)
		if tc.wantErr != nil {
			msg = Redact(tc.raw)
		}
		for _, p := range pieces {
			if strings.Contains(msg, p) {
				t.Errorf("%q redacted as %q", tc.raw, msg)
				break
			}
		}
	}
	if got := Redact("postgres://" + encoded + "@db.example/ingest?sslmode=require&password=x"); got != "postgres://ingest:xxxxx@db.example/ingest?sslmode=require&xxxxx" {
		t.Errorf("Redact keeps the user, the host and where the server is: got %q", got)
	}
	// A ? or # before the last @ may be the query's, whose value the @
	// would then cut: nothing past the scheme is kept.
	if got := Redact("postgres://ingest:" + password + "@db.example/ingest"); got != "postgres://xxxxx" {
		t.Errorf("Redact of a password holding ? and #: got %q", got)
	}
}

// A value shaped as a URL whose scheme is misspelt, in capitals, short of
// a slash or another database's is still a URL: Redact prints none of its
// user information, where the user may be a password.
func TestAMisspeltSchemeIsStillAURL(t *testing.T) {
	for _, tc := range []struct{ raw, scheme string }{
		{"Postgres://ingest:" + password + "@db.example/ingest", "Postgres"},
		{"postgres:/ingest:" + password + "@db.example/ingest", "postgres"},
		{"postgress://ingest:" + password + "@db.example/ingest", "postgress"},
		{"pg://ingest:" + password + "@db.example/ingest", "pg"},
		{"mysql://ingest:" + password + "@db.example/ingest", "mysql"},
		{"postgres:ingest:" + password + "@db.example/ingest", "postgres"},
		{"Redis://:" + password + "@redis:6379/0", "Redis"},
		{"redis:/" + password + "@redis:6379/0", "redis"},
		{"rediss//:" + password + "@redis:6379/0", "rediss"},
		{"postgres//ingest:" + password + "@db.example/ingest", "postgres"},
		{"http//ingest:" + password + "@db.example/", "http"},
		{"pg://ZqvJxw@db.example/ingest", "pg"},
	} {
		scheme, ok := URLScheme(tc.raw)
		if scheme != tc.scheme || ok != (tc.scheme != "") {
			t.Errorf("Scheme(%q) = %q, %v; want %q", tc.raw, scheme, ok, tc.scheme)
		}
		got := Redact(tc.raw)
		for _, p := range pieces {
			if strings.Contains(got, p) {
				t.Errorf("Redact(%q) = %q: holds %q", tc.raw, got, p)
				break
			}
		}
	}
	for _, path := range []string{"ingest.db", "./a:b.db", "/var/lib/ingest/ingest.db", "data:2026.db", "C", "", "data//ingest.db", "/srv/ingest@eu/ingest.db"} {
		if scheme, ok := URLScheme(path); ok {
			t.Errorf("Scheme(%q) = %q: a file's path taken for a URL", path, scheme)
		}
	}
}

// A command line's URLs are masked in whatever a parser says of them.
func TestScrubArgs(t *testing.T) {
	args := []string{"quota", "apply", "--new", "--ledger", "postgres:u:S3cr3tPg@127.0.0.1:1/db",
		"--to=pg://S3cr3tPg@h/db", "mysql://u:S3cr3tPg@h/db", "ingest.db"}
	msg := `unknown command "postgres:u:S3cr3tPg@127.0.0.1:1/db"; bad --to "pg://S3cr3tPg@h/db"; mysql://u:S3cr3tPg@h/db; ingest.db`
	got := ScrubArgs(msg, args)
	if strings.Contains(got, "S3cr3tPg") || !strings.Contains(got, "ingest.db") || !strings.Contains(got, "unknown command") {
		t.Errorf("ScrubArgs(%q) = %q: want every URL's password out, the rest kept", msg, got)
	}
}

// A short password is masked where a driver quotes it, between
// separators, and left inside the words of the message around it: a
// password "p" does not turn "dial tcp" into "dial tcxxxxx". A long one is
// masked wherever it stands.
func TestAShortPasswordLeavesTheWordsAroundIt(t *testing.T) {
	for _, tc := range []struct{ raw, msg, want string }{
		{"postgres://ingest:p@db.example/ingest", `dial tcp 10.0.0.1:5432: password "p" refused (p)`,
			`dial tcp 10.0.0.1:5432: password "xxxxx" refused (xxxxx)`},
		{"redis://:ok@redis:6379/0", "token ok: broken pipe; ok", "token xxxxx: broken pipe; xxxxx"},
		{"postgres://ingest:Zqv1Jxw2Wkt@db.example/ingest", "aZqv1Jxw2Wktb", "axxxxxb"},
	} {
		if got := Scrub(tc.msg, tc.raw); got != tc.want {
			t.Errorf("Scrub(%q, %s) = %q, want %q", tc.msg, Redact(tc.raw), got, tc.want)
		}
	}
}
