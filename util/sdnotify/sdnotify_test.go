package sdnotify

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen is systemd's end: a datagram socket at a short path of the
// test's own (a socket's path has a small bound, a test's directory not).
func listen(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sdn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

func TestReadySaysReadyOnTheSocket(t *testing.T) {
	c, path := listen(t)
	t.Setenv(Socket, path)
	if err := Ready(); err != nil {
		t.Fatalf("Ready() = %v, want nil", err)
	}
	// The datagram is in the socket's queue once Ready returns; the
	// deadline only keeps a broken Ready from hanging the test.
	c.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read the socket: %v", err)
	}
	if got, want := string(buf[:n]), "READY=1"; got != want {
		t.Errorf("systemd read %q, want %q", got, want)
	}
}

func TestReadyWithoutASocketSaysNothing(t *testing.T) {
	t.Setenv(Socket, "")
	if err := Ready(); err != nil {
		t.Errorf("Ready() without %s = %v, want nil", Socket, err)
	}
}

func TestReadyToNoOneIsAnError(t *testing.T) {
	t.Setenv(Socket, filepath.Join(t.TempDir(), "gone"))
	if err := Ready(); err == nil {
		t.Error("Ready() to a socket nobody listens on = nil, want an error")
	}
}

// A word the socket would not take is a warning naming the variable, and
// the daemon goes on; a word taken, or no socket, says nothing.
func TestTellWarnsWhenSystemdCannotHear(t *testing.T) {
	_, path := listen(t)
	for _, c := range []struct {
		name, socket, warn string
	}{
		{"heard", path, ""},
		{"none", "", ""},
		{"gone", filepath.Join(t.TempDir(), "gone"), `level=WARN msg="systemd: could not say the daemon is ready (NOTIFY_SOCKET)" err=`},
	} {
		t.Setenv(Socket, c.socket)
		var logs bytes.Buffer
		Tell(slog.New(slog.NewTextHandler(&logs, nil)))
		if got := logs.String(); (c.warn == "") != (got == "") || !strings.Contains(got, c.warn) {
			t.Errorf("%s: said %q, want %q", c.name, got, c.warn)
		}
	}
}
