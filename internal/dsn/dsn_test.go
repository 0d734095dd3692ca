package dsn

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
		{"postgres://ingest:" + password + "@db.example:5432/ingest?sslmode=require", ErrUnencoded},
		{"redis://:" + password + "@redis:6379/0", ErrUnencoded},
		{"redis://" + password + "@redis:6379/0", ErrUnencoded},
		{"postgres://ingest:Zqv%zzJxw@db.example/ingest", ErrUnencoded},
		{"postgres://ingest:Zqv/Jxw@db.example/ingest", ErrUnencoded},
		{"redis://:Zqv#Jxw@redis:6379/0", ErrUnencoded},
		{"redis://:Zqv:Jxw@redis:6379/0", nil},
		{"postgres://" + encoded + "@db.example:5432/ingest", nil},
		{"postgres://ingest@db.example/ingest?password=" + url.QueryEscape(password), nil},
		{"redis://:ZqvJxw@redis:port/0", ErrUnparsable},
	} {
		if err := Check(tc.raw); !errors.Is(err, tc.wantErr) {
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
	if got := Redact("postgres://ingest:" + password + "@db.example/ingest"); got != "postgres://ingest:xxxxx@db.example/ingest" {
		t.Errorf("Redact keeps the user and the host: got %q", got)
	}
}
