package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ingestworks/ingest"
)

// pgLockKey is the advisory lock that serializes migrations: two hosts
// starting at once apply each step once.
const pgLockKey = 0x696e67657374 // "ingest"

// IsURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Exists says whether db names a database that is there: a file, or a
// PostgreSQL server (whose schema Open checks).
func Exists(db string) bool {
	if IsURL(db) {
		return true
	}
	_, err := os.Stat(db)
	return err == nil
}

// Where is this host and the database db names, for the limiter's list of
// ledgers: a URL without its password, or the file's absolute path.
func Where(db string) string {
	host, _ := os.Hostname()
	if IsURL(db) {
		return host + ":" + Redact(db)
	}
	if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	return host + ":" + db
}

// Redact returns a --db value fit to print: a URL without any part of its
// password, however it is written (ingest.Redact), its scheme misspelt
// too; a file's path as it is.
func Redact(db string) string {
	if _, url := ingest.URLScheme(db); !IsURL(db) && !url {
		return db
	}
	return ingest.Redact(db)
}

// CheckURL checks that a PostgreSQL --db value parses (nil for a file);
// its error never holds any part of the password. A password with a
// reserved character as it is is a *PathError saying to percent-encode it.
func CheckURL(db string) error {
	if !IsURL(db) {
		return foreignURL(db)
	}
	if err := checkUserInfo(db); err != nil {
		return err
	}
	if _, err := pgx.ParseConfig(db); err != nil {
		return fmt.Errorf("%s: %w", Redact(db), redactErr(err, db))
	}
	return nil
}

// keywords is a libpq connection string of keywords (host=db user=u
// password=...): pgx reads it, ingest does not, and as a file's path its
// password would be printed.
var keywords = regexp.MustCompile(`(?i)(^|\s)(host|hostaddr|port|dbname|user|password|sslmode)\s*=`)

// foreignURL is a PathError when db has the shape of a URL whose scheme
// is not PostgreSQL's as pgx reads it (postgres:// or postgresql://, in
// lower case, two slashes): taken for a file's path, it would be created
// as one, or read as no database yet. Its user information is masked.
func foreignURL(db string) error {
	if keywords.MatchString(db) {
		return &PathError{"(a connection string of keywords, not shown: it may hold a password)", "is not a URL",
			"write it as postgres://USER:PASSWORD@HOST:5432/DB?sslmode=... (docs/operations/store.md, The URL)"}
	}
	scheme, ok := ingest.URLScheme(db)
	if !ok {
		return nil
	}
	problem := fmt.Sprintf("is a URL whose scheme %q is not one ingest opens", scheme)
	switch {
	case ingest.ColonlessURL(db):
		problem = "is a URL whose scheme lacks its colon (" + scheme + "//, not " + scheme + "://)"
	case scheme == "postgres" || scheme == "postgresql":
		problem = "is a URL whose scheme lacks the two slashes of " + scheme + "://"
	}
	return &PathError{ingest.Redact(db), problem,
		"write postgres:// or postgresql:// (lower case, two slashes) for PostgreSQL, or a file's path for SQLite (./ before a file name with a colon)"}
}

// openPostgres opens the PostgreSQL database at rawURL and, when migrate is
// set, brings its schema up to date; else it only checks the schema step,
// needing nothing but read rights.
func openPostgres(ctx context.Context, rawURL string, migrate bool) (*DB, error) {
	name := Redact(rawURL)
	if err := checkUserInfo(rawURL); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, redactErr(err, rawURL))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	// JIT compiling a plan costs tens of milliseconds, more than any of
	// the store's queries takes: the planner's estimates for the recursive
	// walks over runs set it off. A URL can still ask for either setting
	// (options=-c jit=on).
	// A generic plan, made without the parameters' values, cannot see how
	// rare a search's words are, and walks the index in vid order where a
	// plan for the words would read their few matches: the store's queries
	// cost less to plan than to run wrong.
	for k, v := range map[string]string{"jit": "off", "plan_cache_mode": "force_custom_plan"} {
		if _, ok := cfg.RuntimeParams[k]; !ok {
			cfg.RuntimeParams[k] = v
		}
	}
	pool := openPG(cfg)
	pool.SetMaxOpenConns(16)
	pool.SetMaxIdleConns(4)
	pool.SetConnMaxIdleTime(time.Minute)
	db := &DB{path: name, w: pool, r: pool, d: pgDialect{}, q: pgSQL, rankWindow: RankWindow}
	if err = db.pgSchemaStep(ctx, migrate); err == nil && migrate {
		db.st, err = prepare(ctx, pool, db.q)
	}
	if err != nil {
		pool.Close()
		var ve *VersionError
		if errors.As(err, &ve) {
			ve.Path = name
			return nil, ve
		}
		if pe := missingDatabase(err, name); pe != nil {
			return nil, pe
		}
		if ce := connectError(err, rawURL); ce != nil {
			return nil, ce
		}
		return nil, fmt.Errorf("open %s: %w", name, redactErr(err, rawURL))
	}
	return db, nil
}

// checkUserInfo refuses a URL that pgx and net/url would split in
// different places, or that does not parse: a password with @, /, ?, # or
// % as it is (pgx ends the user information at the first @, net/url at
// the last, and either may quote the rest as a host or a database).
func checkUserInfo(rawURL string) error {
	err := ingest.CheckURL(rawURL)
	switch {
	case errors.Is(err, ingest.ErrURLUnencoded):
		return &PathError{Redact(rawURL), "has a reserved character as it is in its user or password", ingest.URLHint}
	case err != nil:
		return &PathError{Redact(rawURL), "does not parse as a URL", "if a password holds @ : / ? # or %, " + ingest.URLHint}
	}
	return nil
}

// missingDatabase is a PathError when the server answered that the URL's
// database does not exist (SQLSTATE 3D000), else nil.
func missingDatabase(err error, name string) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		return nil
	}
	db := name
	if u, perr := url.Parse(name); perr == nil {
		db = strings.TrimPrefix(u.Path, "/")
	}
	return &PathError{name, "names a database that does not exist on the server",
		fmt.Sprintf("create it (CREATE DATABASE %s OWNER <user>, or createdb: docs/operations/store.md, Creating the database), or fix the URL's path", db)}
}

// ConnectError is a PostgreSQL server this host could not reach: a
// runtime failure (the server may come back, and a daemon's supervisor
// restarts it), said once with what to check.
type ConnectError struct {
	DB    string // the URL without its password
	Cause string // the network's words: no part of the URL's password
	err   error
}

func (e *ConnectError) Error() string {
	return "open " + e.DB + ": cannot connect: " + e.Cause + ": check the host and port (is PostgreSQL running, and reachable from this host?), " +
		"then the user, password and sslmode in --db / INGEST_DB; `ingest check --offline` tries the database alone"
}

func (e *ConnectError) Unwrap() error { return e.err }

// connectError is a connection PostgreSQL refused or that never reached
// it, as the user reads it, or nil for any other error. Credentials or
// TLS the server refuses are a PathError (a configuration, as a SQLite
// file this user cannot open is); a server that cannot be reached is a
// ConnectError. Either says it once: pgx repeats its cause per address
// and per TLS attempt.
func connectError(err error, rawURL string) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return nil
	}
	name := Redact(rawURL)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Code, "28") {
		return &PathError{name, "is refused by the server (" + ingest.Scrub(pe.Message, rawURL) + ")",
			"check the user, password and sslmode in --db / INGEST_DB, and the server's pg_hba.conf for this host"}
	}
	if pe := wrongServer(err, rawURL); pe != nil {
		return pe
	}
	if strings.Contains(err.Error(), "server refused TLS connection") {
		return &PathError{name, "asks for TLS (sslmode) that the server does not offer",
			"set sslmode=prefer or disable in the URL for a server without TLS, or turn TLS on at the server"}
	}
	return &ConnectError{DB: name, Cause: ingest.Scrub(connectCause(err), rawURL), err: err}
}

// wrongServer is a PathError when the server at the URL's address, having
// failed PostgreSQL's handshake, answers as another server (Redis, HTTP):
// a URL to fix, not an outage. A dial refused, or a server that says
// nothing to a probe either, stays a ConnectError.
func wrongServer(err error, rawURL string) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return nil
	}
	cfg, perr := pgx.ParseConfig(rawURL)
	if perr != nil {
		return nil
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	p := ingest.IdentifyServer(context.Background(), network, addr)
	if p == ingest.ProtocolUnknown || p == ingest.ProtocolPostgreSQL {
		return nil
	}
	return &PathError{Redact(rawURL), fmt.Sprintf("reaches a server at %s that %s, not PostgreSQL", addr, p.Answered()),
		"point it at PostgreSQL's host and port (5432 unless changed), as postgres://USER:PASSWORD@HOST:5432/DB"}
}

// connectCause is the first network cause in err: a dial refused, a name
// not resolved, no answer in time.
func connectCause(err error) string {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return dns.Error()
	case errors.As(err, &op):
		return op.Error()
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return "no answer in time (connect_timeout in the URL, 10s when unset)"
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// redactErr is err with the URL's password taken out of its text: pgx
// quotes the connection string in some of its errors. It still matches
// what err matches.
func redactErr(err error, rawURL string) error {
	return redacted{err, ingest.Scrub(err.Error(), rawURL)}
}

type redacted struct {
	err error
	msg string
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// pgSchemaStep reads the schema step and, when migrate is set, applies the
// steps it lacks.
func (db *DB) pgSchemaStep(ctx context.Context, migrate bool) error {
	v, err := pgVersion(ctx, db.w)
	switch {
	case err != nil:
		return err
	case v > PGSchemaVersion:
		return &VersionError{Have: v, Want: PGSchemaVersion}
	case v == PGSchemaVersion:
		return nil
	case !migrate && v == 0:
		return ErrNoDatabase
	case !migrate:
		return &VersionError{Have: v, Want: PGSchemaVersion}
	}
	return pgMigrate(ctx, db.w)
}

// pgVersion reads schema_version: 0 when the database has no ingest
// schema yet.
func pgVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var exists bool
	err := q.QueryRowContext(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists)
	if err != nil || !exists {
		return 0, err
	}
	var v sql.NullInt64
	err = q.QueryRowContext(ctx, `SELECT max(step) FROM schema_version`).Scan(&v)
	return int(v.Int64), err
}

// pgMigrate applies the missing steps in one transaction that holds the
// migration lock, so that hosts starting together apply each step once,
// and a failed step leaves the database as it was.
func pgMigrate(ctx context.Context, pool *sql.DB) error {
	// Read committed, whatever the server's default: each statement then
	// sees what a host that held the lock before committed.
	tx, err := pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?1)`, int64(pgLockKey)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
  step       INTEGER PRIMARY KEY,
  applied_ms BIGINT  NOT NULL
)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	v, err := pgVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var done []applied
	for _, m := range pgMigrations[min(v, len(pgMigrations)):] {
		a, err := m.timed(ctx, tx, v == 0)
		if err != nil {
			return err
		}
		done = append(done, a)
		// Stamped by the server's clock, which every host sharing it reads.
		_, err = tx.ExecContext(ctx, `INSERT INTO schema_version (step, applied_ms)
VALUES (?1, FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)`, m.version)
		if err != nil {
			return fmt.Errorf("migrate: %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	logApplied(ctx, "postgres", v, done)
	return nil
}

// Contended is an error that a transaction gets from another's locks and
// gets past when run again: on PostgreSQL a deadlock, a serialization
// failure, or a lock not granted at once (NOWAIT) or in time
// (lock_timeout); on SQLite a writer that held the file past the busy
// timeout (a busy machine).
func Contended(err error) bool {
	var pe *pgconn.PgError
	return isBusy(err) || retryable(err) || errors.As(err, &pe) && pe.Code == "55P03"
}

// Unavailable is an error of a database that is not there for now: a
// PostgreSQL server that cannot be reached, that closed the connection
// under a statement, or that says it is shutting down, starting or out of
// connections. A reader asks again later; nothing in the request was
// wrong.
func Unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var op *net.OpError
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
	case errors.As(err, &ce), errors.As(err, &op), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return pgconn.SafeToRetry(err)
}

// retryable is a PostgreSQL error that the same transaction, run again,
// can get past: a deadlock with another host's page, or a serialization
// failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
