package quota_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// TestAccessTellsARefusalFromAnOutage: a Redis that refuses the URL's
// password or database is an *AccessError naming the fix, never the
// password; one that lets the client in is nil; one that is not there is
// unreached, which the fail policy rides out.
func TestAccessTellsARefusalFromAnOutage(t *testing.T) {
	s := redistest.Start(t)
	if reply, err := redistest.Do(s.Addr, "CONFIG", "SET", "requirepass", "s3cret"); err != nil || reply != "+OK" {
		t.Fatalf("set a password: %q, %v", reply, err)
	}
	for _, tc := range []struct {
		name, url, fix string // fix "" for none
	}{
		{"no password", "redis://" + s.Addr + "/0", "requires a password"},
		{"a wrong password", "redis://:wrong@" + s.Addr + "/0", "password is wrong"},
		{"a database it does not have", "redis://:s3cret@" + s.Addr + "/99", "fewer databases"},
		{"let in", "redis://:s3cret@" + s.Addr + "/0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := quota.NewClient(tc.url, quota.DefaultTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = quota.CheckAccess(context.Background(), c)
			var ae *quota.AccessError
			switch {
			case tc.fix == "" && err != nil:
				t.Errorf("got %v, want it let in", err)
			case tc.fix != "" && !errors.As(err, &ae):
				t.Errorf("got %v, want an *AccessError", err)
			case tc.fix != "" && (!strings.Contains(ae.Fix, tc.fix) || strings.Contains(ae.Error(), "wrong@")):
				t.Errorf("got %q, want the fix %q and no password", ae.Error(), tc.fix)
			}
		})
	}
	gone := redistest.FreePort(t)
	c, err := quota.NewClient("redis://127.0.0.1:"+strconv.Itoa(gone)+"/0", quota.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = quota.CheckAccess(context.Background(), c)
	var ae *quota.AccessError
	if errors.As(err, &ae) || !quota.Unreached(err) {
		t.Errorf("no server: got %v, want an outage, unreached", err)
	}
}

// TestAddressIsWhatTheClientDials: the address a Redis URL's client dials
// first, a cluster's first node, a socket's path; none for no URL.
func TestAddressIsWhatTheClientDials(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://:pw@h:6379/0":                     "h:6379",
		"redis://h:6379?addr=h2:6379&addr=h3:6379": "h:6379",
		"unix:///run/redis.sock":                   "/run/redis.sock",
		"not a url":                                "",
	} {
		if _, got := quota.Address(raw); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}
