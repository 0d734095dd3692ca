// Package pgtest starts a real PostgreSQL for tests: one cluster per test
// binary, in a temporary directory, on a free loopback port, started the
// first time a test asks for a database and stopped when the binary's
// TestMain returns through Run (or, if the binary dies first, by the
// kernel: the server gets SIGQUIT when its parent exits). Each test gets a
// database of its own, dropped when the test ends. Nothing here fakes
// PostgreSQL.
//
// initdb and postgres refuse to run as root: as root, the cluster runs as
// the postgres user that Debian's package creates.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// DurableEnv, set to anything, keeps PostgreSQL's default durability
// (fsync, synchronous commits) for benchmarks that compare it with SQLite;
// tests go without, the cluster being thrown away.
const DurableEnv = "INGEST_PGTEST_DURABLE"

// cluster is the binary's one server.
type cluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
	err  error // why it could not start
	skip bool  // PostgreSQL is not installed and cannot be here
}

var (
	once  sync.Once
	the   *cluster
	dbSeq atomic.Int64
)

// Run runs the tests and then stops the cluster, if one was started. Call
// it from TestMain: os.Exit(pgtest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the cluster and removes its directory.
func Stop() {
	if the != nil {
		the.stop()
	}
}

func (c *cluster) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.Signal(syscall.SIGCONT)            // a stopped server cannot shut down
	_ = c.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(c.dir)
	c.cmd = nil
}

// URL returns the URL of a new, empty database for this test, dropped when
// the test ends. It skips the test only when PostgreSQL is not installed
// and this machine cannot install it (not root, or no apt-get); it fails
// the test when PostgreSQL is there but does not start.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { the = start() })
	return the.database(t)
}

func (c *cluster) database(t testing.TB) string {
	t.Helper()
	if c.skip {
		t.Skip(c.err.Error())
	}
	if c.err != nil {
		t.Fatalf("start PostgreSQL: %v", c.err)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := c.admin(fmt.Sprintf(`CREATE DATABASE %s`, name)); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.admin(fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)) })
	return c.url(name)
}

// Server is a cluster of one test's own, for a test that stops, kills or
// hangs it: doing that to the binary's shared one would stop every other
// test with it.
type Server struct{ *cluster }

// Start starts a cluster for this test, stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	c := start()
	t.Cleanup(c.stop)
	if c.skip {
		t.Skip(c.err.Error())
	}
	if c.err != nil {
		t.Fatalf("start PostgreSQL: %v", c.err)
	}
	return &Server{c}
}

// URL returns the URL of a new, empty database on s, dropped when the test
// ends.
func (s *Server) URL(t testing.TB) string {
	t.Helper()
	return s.database(t)
}

// Signal sends sig to the server: the postmaster and every process it
// started (each of which PostgreSQL makes a process group of its own), so
// that SIGSTOP hangs the whole server as a hung host would.
func (c *cluster) Signal(sig syscall.Signal) error {
	if c.cmd == nil {
		return errors.New("the server is not running")
	}
	pid := c.cmd.Process.Pid
	if err := syscall.Kill(pid, sig); err != nil {
		return err
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ")"
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			_ = syscall.Kill(child, sig)
		}
	}
	return nil
}

// AdminURL is the URL of the cluster's postgres database (starting the
// cluster if need be), for tests that create roles.
func AdminURL(t testing.TB) string {
	t.Helper()
	URL(t) // starts it, or skips
	return the.url("postgres")
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// admin runs one statement on the postgres database.
func (c *cluster) admin(stmt string) error {
	db, err := sql.Open("pgx", c.url("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// binDir finds the server binaries: Debian keeps them out of PATH, under
// /usr/lib/postgresql/VERSION/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		// A link on PATH (as some images keep) leads to the directory
		// that holds the other binaries too.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("PostgreSQL is not installed")
	}
	return filepath.Dir(found[len(found)-1]), nil
}

func start() *cluster {
	bin, err := binDir()
	if err != nil {
		_, aptErr := exec.LookPath("apt-get")
		return &cluster{err: fmt.Errorf("%w: run `make deps` as root, or apt-get install postgresql", err),
			skip: os.Geteuid() != 0 || aptErr != nil}
	}
	c := &cluster{}
	if c.err = c.init(bin); c.err != nil {
		return c
	}
	for range 5 {
		if c.err = c.serve(bin); c.err == nil {
			return c
		}
	}
	return c
}

// init creates the cluster's directory, owned by the user the server runs
// as, and runs initdb in it.
func (c *cluster) init(bin string) error {
	base, err := os.MkdirTemp("", "ingest-pg-")
	if err != nil {
		return err
	}
	c.dir = base
	if err := os.Chmod(base, 0o755); err != nil {
		return err
	}
	cred, err := serverUser()
	if err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(base, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", c.data(), "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale", "C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return nil
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// serve starts postgres on a free port and waits until it answers.
func (c *cluster) serve(bin string) error {
	c.port = freePort()
	cred, _ := serverUser()
	args := []string{"-D", c.data(), "-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400", "-c", "log_min_messages=fatal"}
	if os.Getenv(DurableEnv) == "" {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	log, err := os.Create(filepath.Join(c.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd = cmd
	if err := c.wait(15 * time.Second); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		c.cmd = nil
		text, _ := os.ReadFile(log.Name())
		return fmt.Errorf("%w\n%s", err, tail(string(text), 8))
	}
	return nil
}

func (c *cluster) wait(within time.Duration) error {
	deadline := time.Now().Add(within)
	db, err := sql.Open("pgx", c.url("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres on port %d did not answer: %v", c.port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serverUser is the user the cluster runs as: the postgres user when this
// process is root, else this process's own (nil).
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Dump prints the schema of the database at url as pg_dump writes it, with
// what only restores need (settings, comments, owners) left out: the text a
// reader of the schema wants.
func Dump(t testing.TB, url string) string {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--schema-only", "--no-owner",
		"--no-privileges", "--no-comments", "--no-tablespaces", "--dbname", url).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	var kept []string
	blank := true
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "--"), strings.HasPrefix(line, "SET "),
			strings.HasPrefix(line, "SELECT pg_catalog.set_config"),
			strings.HasPrefix(line, `\restrict`), strings.HasPrefix(line, `\unrestrict`):
			continue
		case line == "":
			if blank {
				continue
			}
			blank = true
		default:
			blank = false
		}
		kept = append(kept, line)
	}
	return strings.TrimSpace(strings.Join(kept, "\n")) + "\n"
}
