package clock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lookNow makes the next Now look at the file, as a second passing would.
func lookNow(r *Rehearsal) { r.next.Store(0) }

func TestRehearsalOffsetFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offset")
	env := func(name string) string {
		if name == RehearseEnv {
			return path
		}
		return ""
	}
	var bad []error
	c, err := FromEnv(env, func(err error) { bad = append(bad, err) })
	if err != nil {
		t.Fatalf("an absent file: %v, want no offset", err)
	}
	r := c.(*Rehearsal)
	near := func(want time.Duration) {
		t.Helper()
		before := time.Now()
		got := r.Now()
		if off := got.Sub(before); off < want || off > want+time.Minute/2 {
			t.Fatalf("offset %s, want %s", off, want)
		}
	}
	near(0)
	for _, tc := range []struct {
		content string
		want    time.Duration
	}{{"90s\n", 90 * time.Second}, {"-2m", -2 * time.Minute}, {"", 0}} {
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		lookNow(r)
		near(tc.want)
	}
	// Within the second, a change is not looked at yet: the hot path
	// reads an atomic.
	os.WriteFile(path, []byte("1h"), 0o644)
	r.next.Store(time.Now().Add(time.Hour).UnixNano())
	near(0)
	lookNow(r)
	near(time.Hour)
	// A bad change is told once and keeps the offset.
	os.WriteFile(path, []byte("soon"), 0o644)
	lookNow(r)
	near(time.Hour)
	lookNow(r)
	near(time.Hour)
	if len(bad) != 1 || !strings.Contains(bad[0].Error(), RehearseEnv) || !strings.Contains(bad[0].Error(), `"soon"`) {
		t.Fatalf("a bad change: told %v, want once, naming %s and the content", bad, RehearseEnv)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	lookNow(r)
	near(0)
}

func TestRehearsalBadFileAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offset")
	os.WriteFile(path, []byte("ninety seconds"), 0o644)
	_, err := FromEnv(func(string) string { return path }, nil)
	if err == nil || !strings.Contains(err.Error(), RehearseEnv) || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want an error naming %s and the file", err, RehearseEnv)
	}
	c, err := FromEnv(func(string) string { return "" }, nil)
	if err != nil || c != System {
		t.Fatalf("no variable: %v, %v; want System", c, err)
	}
	if _, err := FromEnv(func(string) string { return t.TempDir() }, nil); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a directory: %v, want an error", err)
	}
}
