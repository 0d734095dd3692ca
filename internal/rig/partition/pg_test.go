package partition

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// pgServer is a PostgreSQL cluster of the test's own in node's namespace,
// listening on the node's address for the hosts and on a socket in its
// directory for the test (which stays outside every namespace).
type pgServer struct {
	dir, ip string
	cmd     *exec.Cmd
}

// startPG initdbs and starts a cluster in node's namespace. initdb and
// postgres refuse to run as root, so both run as the postgres user
// (setpriv execs in place, so the process the test holds is the server).
func startPG(t *testing.T, l *lab, node, ip string) *pgServer {
	t.Helper()
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		t.Skip("partition: PostgreSQL is not installed (make deps)")
	}
	bin := filepath.Dir(found[len(found)-1])
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("partition: no postgres user to run the server as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "ingest-partition-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	as := func(argv ...string) *exec.Cmd {
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		return c
	}
	data := filepath.Join(dir, "data")
	if out, err := as(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale", "C.UTF-8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// The hosts reach it over the lab's bridge; trust is for the lab's
	// addresses alone, which reach nothing else.
	hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(hba, "host all all %s0/24 trust\n", l.subnet)
	hba.Close()
	s := &pgServer{dir: dir, ip: ip}
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s.cmd = l.command(node, "setpriv", "--reuid="+u.Uid, "--regid="+u.Gid, "--init-groups",
		filepath.Join(bin, "postgres"), "-D", data, "-p", "5432", "-k", dir, "-c", "listen_addresses="+ip,
		"-c", "max_connections=200", "-c", "log_min_messages=fatal",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown; the lab's teardown kills what is left
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	})
	db, err := sql.Open("pgx", s.local("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(log.Name())
			t.Fatalf("postgres did not answer: %v\n%s", err, text)
		}
		time.Sleep(100 * time.Millisecond) // the server's start, polled: it signals nothing else
	}
	if _, err := db.Exec(`CREATE DATABASE ingest`); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return s
}

// url is the database's URL for a host, over the bridge.
func (s *pgServer) url() string {
	return fmt.Sprintf("postgres://postgres@%s:5432/ingest?sslmode=disable", s.ip)
}

// local is a database's URL for the test, on the server's socket.
func (s *pgServer) local(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=5432&sslmode=disable", db, s.dir)
}
