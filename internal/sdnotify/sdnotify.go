// Package sdnotify speaks systemd's readiness protocol (sd_notify(3)): a
// unit started as Type=notify is given a datagram socket in NOTIFY_SOCKET,
// and `systemctl start` returns, and the units ordered after it start, once
// the process writes READY=1 there. Started otherwise, there is no socket
// and nothing to say.
package sdnotify

import (
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
