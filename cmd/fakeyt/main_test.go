package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServesUntilSignalled(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "fakeyt.url")
	done := make(chan error, 1)
	go func() { done <- run([]string{"--listen", "127.0.0.1:0", "--addr-file", addrFile, "--keys", "k1,k2"}) }()
	var base string
	for i := 0; i < 200 && base == ""; i++ {
		if b, err := os.ReadFile(addrFile); err == nil {
			base = string(b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if base == "" {
		t.Fatal("no address written")
	}
	for key, want := range map[string]int{"k2": 200, "other": 400} {
		res, err := http.Get(base + "youtube/v3/videos?part=id&chart=mostPopular&regionCode=GB&key=" + key)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("key %s: status %d, want %d", key, res.StatusCode, want)
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run = %v, want nil after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still serving after SIGTERM")
	}
}

// startFake runs the command with args and returns its base URL; it is
// stopped by SIGTERM when the test ends.
func startFake(t *testing.T, args ...string) string {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "fakeyt.url")
	done := make(chan error, 1)
	go func() { done <- run(append([]string{"--listen", "127.0.0.1:0", "--addr-file", addrFile}, args...)) }()
	var base string
	for i := 0; i < 500 && base == ""; i++ {
		if b, err := os.ReadFile(addrFile); err == nil {
			base = string(b)
		}
		select {
		case err := <-done:
			t.Fatalf("run = %v before listening", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if base == "" {
		t.Fatal("no address written")
	}
	t.Cleanup(func() {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-done
	})
	return base
}

func status(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestFaultsFromTheCommandLine(t *testing.T) {
	base := startFake(t, "--fail", "2", "--fail-status", "503", "--bucket-quota", "default=3")
	chart := base + "youtube/v3/videos?part=id&chart=mostPopular&regionCode=GB&key=k"
	if st := status(t, base+"youtube/v3/i18nRegions?part=snippet"); st != 403 {
		t.Errorf("a request without a key: status %d, want 403 (charged to no project)", st)
	}
	var got []int
	for range 5 {
		got = append(got, status(t, chart))
	}
	want := []int{503, 503, 200, 403, 403}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v (two failures, one page, then the spent default pool)", got, want)
	}
	res, err := http.Get(base + "_charged")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var charged map[string]int64
	if err := json.NewDecoder(res.Body).Decode(&charged); err != nil {
		t.Fatal(err)
	}
	if charged["default"] != 5 {
		t.Errorf("/_charged = %v, want default 5 (failed calls are charged too, a request without a key is not)", charged)
	}
}

func TestFaultFlagsRefuseUnknownValues(t *testing.T) {
	for _, args := range [][]string{
		{"--quota-refusal", "weekly"}, {"--bad-key", "stolen"}, {"--bucket-quota", "video=5"},
		{"--bucket-quota", "default=0"}, {"--fail", "3", "--fail-status", "404"},
	} {
		err := run(append([]string{"--listen", "127.0.0.1:0"}, args...))
		if err == nil || !strings.Contains(err.Error(), args[len(args)-2]) {
			t.Errorf("%v: run = %v, want an error naming %s", args, err, args[len(args)-2])
		}
	}
}
