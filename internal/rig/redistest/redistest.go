// Package redistest starts real redis-server processes on free loopback
// ports for tests: a single server, or a three-node Redis Cluster. Each
// server lives in the test's temporary directory and stops when the test
// ends. Nothing here fakes Redis.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is one running redis-server.
type Server struct {
	Addr string
	Port int
	dir  string
	cmd  *exec.Cmd
	args []string
	env  []string // added to the server's environment, as StartEnv gives it
	// held keeps a stopped server's port bound, never listening, so that
	// a connection is refused there and no other test's server is given
	// the port in the meantime.
	held int
}

// binary finds redis-server or fails the test saying how to get it.
func binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found on PATH: run `make test` (it installs Debian's redis-server package when run as root) or `apt-get install redis-server`")
	}
	return path
}

// FreePort asks the kernel for a free loopback port.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs a redis-server on a free loopback port, without persistence,
// and stops it when the test ends. Extra arguments are redis-server options
// ("--maxmemory", "10mb").
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return StartEnv(t, nil, extra...)
}

// StartEnv is Start with env added to the server's environment
// ("LD_PRELOAD=..."), kept across Restart.
func StartEnv(t testing.TB, env []string, extra ...string) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir(), env: env}
	s.args = extra
	var err error
	for range 5 {
		s.Port = FreePort(t)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.start(t); err == nil {
			t.Cleanup(func() { s.Stop(); s.release() })
			return s
		}
	}
	t.Fatalf("start redis-server: %v", err)
	return nil
}

func (s *Server) start(t testing.TB) error {
	s.release()
	args := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"), "--daemonize", "no",
	}
	s.cmd = exec.Command(binary(t), append(args, s.args...)...)
	if s.env != nil {
		s.cmd.Env = append(os.Environ(), s.env...)
	}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	if err := waitPing(s.Addr, 5*time.Second); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
		return fmt.Errorf("%w\n%s", err, tail(string(log), 5))
	}
	return nil
}

// Stop kills the server; the port stays reserved for Restart.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
	s.hold()
}

// hold binds the port the server had, without listening: the kernel
// refuses connections to it, as to a stopped server, and gives it to no
// other socket until release.
func (s *Server) hold() {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: s.Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return
	}
	s.held = fd + 1
}

// release frees the port hold bound.
func (s *Server) release() {
	if s.held > 0 {
		syscall.Close(s.held - 1)
		s.held = 0
	}
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	var err error
	for range 20 {
		if err = s.start(t); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("restart redis-server on %s: %v", s.Addr, err)
}

// RestartFromSnapshot starts the server again on the same port from the
// last RDB snapshot in its directory (written by SAVE or BGSAVE): the data
// comes back as it was at that snapshot, like a restart without AOF or a
// failover to a replica that is behind. Restart, by contrast, starts empty
// as long as nothing was saved.
func (s *Server) RestartFromSnapshot(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(s.dir, "dump.rdb")); err != nil {
		t.Fatalf("restart redis-server from its snapshot: %v (run SAVE first)", err)
	}
	s.Restart(t)
}

// Signal sends sig to the server (syscall.SIGSTOP hangs it, SIGCONT
// resumes it). A test that stops the server should resume it in a
// t.Cleanup: Stop kills a stopped server too, but the test's clients would
// wait on it until then.
func (s *Server) Signal(sig os.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return fmt.Errorf("redis-server on %s is not running", s.Addr)
	}
	return s.cmd.Process.Signal(sig)
}

// Do sends one command over a plain connection and returns the reply line,
// for test setup that should not depend on the client under test.
func Do(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// Time reads the server's clock (TIME), which the limiter's scripts decide
// by.
func Time(addr string) (time.Time, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nTIME\r\n")); err != nil {
		return time.Time{}, err
	}
	// *2, then two bulk strings: seconds and microseconds.
	r := bufio.NewReader(c)
	var lines [5]string
	for i := range lines {
		if lines[i], err = r.ReadString('\n'); err != nil {
			return time.Time{}, err
		}
		lines[i] = strings.TrimSpace(lines[i])
	}
	sec, err1 := strconv.ParseInt(lines[2], 10, 64)
	usec, err2 := strconv.ParseInt(lines[4], 10, 64)
	if lines[0] != "*2" || err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("TIME on %s: unexpected reply %q", addr, lines)
	}
	return time.Unix(sec, usec*1000), nil
}

func waitPing(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		reply, err := Do(addr, "PING")
		if err == nil && reply == "+PONG" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING: %v %q", addr, err, reply)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Cluster is a three-master Redis Cluster on loopback.
type Cluster struct {
	Nodes []*Server
}

// Addrs lists the nodes' addresses, for a cluster client.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr)
	}
	return a
}

// StartCluster starts three cluster-enabled servers, joins them with
// redis-cli --cluster create and waits until the cluster reports ok.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	c := &Cluster{}
	for i := range 3 {
		conf := fmt.Sprintf("nodes-%d.conf", i)
		// No test fails a node, so a node is failed only after a minute
		// unanswered: a busy machine's few seconds must not take the
		// cluster down.
		c.Nodes = append(c.Nodes, Start(t, "--cluster-enabled", "yes",
			"--cluster-config-file", conf, "--cluster-node-timeout", "60000"))
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli not found on PATH: install Debian's redis-tools (make test does)")
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitOK(t)
	return c
}

func (c *Cluster) waitOK(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, err := clusterInfo(n.Addr)
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ok: %v %s", n.Addr, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// clusterInfo reads CLUSTER INFO, a bulk string reply.
func clusterInfo(addr string) (string, error) {
	out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", addr[strings.LastIndex(addr, ":")+1:], "CLUSTER", "INFO").Output()
	return string(out), err
}
