package main

import (
	"net/http"
	"os"
	"path/filepath"
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
