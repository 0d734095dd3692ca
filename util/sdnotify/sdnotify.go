// Package sdnotify speaks systemd's readiness protocol (sd_notify(3)): a
// unit started as Type=notify is given a datagram socket in NOTIFY_SOCKET,
// and `systemctl start` returns, and the units ordered after it start, once
// the process writes READY=1 there. Started otherwise, there is no socket
// and nothing to say.
package sdnotify

import (
	"log/slog"
	"net"
	"os"
	"strings"
)

// Socket is the variable systemd names its socket in.
const Socket = "NOTIFY_SOCKET"

// Ready tells systemd the process has started, when systemd started it as
// Type=notify. Elsewhere (no NOTIFY_SOCKET) it does nothing and returns nil.
func Ready() error {
	sock := os.Getenv(Socket)
	if sock == "" {
		return nil
	}
	if strings.HasPrefix(sock, "@") { // an abstract socket
		sock = "\x00" + sock[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte("READY=1"))
	return err
}

// Tell is Ready, with a warning on log when the socket would not take the
// word: the unit waiting on it then starts by its timeout, not by the
// daemon, and the operator reads why.
func Tell(log *slog.Logger) {
	if err := Ready(); err != nil {
		log.Warn("systemd: could not say the daemon is ready ("+Socket+")", "err", err)
	}
}
