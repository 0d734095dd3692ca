package wiring

import (
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/ingestworks/ingest"
)

// notifySocket is where systemd, starting a Type=notify unit, listens for
// the process to say it is ready (sd_notify(3)).
const notifySocket = "NOTIFY_SOCKET"

// notifyReady tells systemd the daemon has started, its listener serving
// its site, when systemd started it as Type=notify: `systemctl start`
// returns then, and a unit ordered after it starts on a daemon that
// answers. Elsewhere (no NOTIFY_SOCKET) it does nothing.
func notifyReady(log *slog.Logger) {
	sock := os.Getenv(notifySocket)
	if sock == "" {
		return
	}
	if strings.HasPrefix(sock, "@") { // an abstract socket
		sock = "\x00" + sock[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err == nil {
		_, err = c.Write([]byte("READY=1"))
		c.Close()
	}
	if err != nil {
		log.Warn("systemd: could not say the daemon is ready ("+notifySocket+")", ingest.LogErr, err)
	}
}
