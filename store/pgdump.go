package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// DumpTools names what a PostgreSQL database's backup runs: pg_dump
// writes it, pg_restore reads it back. An error names the one not on PATH.
func DumpTools() error {
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not on PATH: a PostgreSQL database is backed up with pg_dump and checked with pg_restore; install PostgreSQL's client tools (Debian: postgresql-client)", tool)
		}
	}
	return nil
}

// Dump writes the PostgreSQL database at rawURL into file with pg_dump in
// its custom format (what pg_restore restores), then reads it back whole
// with pg_restore --list; tables is how many tables' data it holds. The
// password reaches pg_dump in its environment (PGPASSWORD), never on its
// command line, which any user of the host can read.
func Dump(ctx context.Context, rawURL, file string) (tables int, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", Redact(rawURL), redactErr(err, rawURL))
	}
	env := os.Environ()
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			env = append(env, "PGPASSWORD="+pw)
		}
		u.User = url.User(u.User.Username())
	}
	if _, err := tool(ctx, env, "pg_dump", "--format=custom", "--file", file, "--dbname", u.String()); err != nil {
		return 0, fmt.Errorf("%s: %w", Redact(rawURL), err)
	}
	list, err := tool(ctx, nil, "pg_restore", "--list", file)
	if err != nil {
		return 0, fmt.Errorf("read the dump back: %w", err)
	}
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " TABLE DATA ") {
			tables++
		}
	}
	if tables == 0 {
		return 0, errors.New("read the dump back: pg_restore --list names no table's data")
	}
	return tables, nil
}

// tool runs a PostgreSQL client tool; its error holds the tool's last
// words (which name no password: pg_dump is given none on its line).
func tool(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}
