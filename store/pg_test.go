package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// Tests of what only the PostgreSQL store has: its schema steps, applied
// by hosts that start at once, and a reader that may only SELECT.

// Hosts starting together on a new database apply the schema once.
func TestPGMigrateConcurrently(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(context.Background(), u)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	db := openURL(t, u)
	if n := count(t, db, `SELECT count(*) FROM schema_version`); n != PGSchemaVersion {
		t.Errorf("schema_version holds %d steps, want %d", n, PGSchemaVersion)
	}
	if n := count(t, db, `SELECT count(*) FROM ledger_notes WHERE name = 'ledger_id'`); n != 1 {
		t.Errorf("%d ledger ids, want 1", n)
	}
}

// A database of a later step is refused, naming both steps, and left as
// it is.
func TestPGNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	parsed, _ := url.Parse(pgtest.URL(t))
	parsed.User = url.UserPassword(parsed.User.Username(), "pw-Secret")
	u := parsed.String()
	db := openURL(t, u)
	if _, err := db.Writer().Exec(`INSERT INTO schema_version VALUES (99, 0)`); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(context.Context, string) (*DB, error){Open, OpenExisting} {
		_, err := open(context.Background(), u)
		var ve *VersionError
		if !errors.As(err, &ve) || ve.Have != 99 || ve.Want != PGSchemaVersion || strings.Contains(err.Error(), "pw-Secret") {
			t.Errorf("open a step-99 database: %v, want a VersionError 99 > %d naming the URL without its password", err, PGSchemaVersion)
		}
	}
}

// A role that may only read opens the store and searches it: read-only
// commands need no write rights.
func TestPGReadOnlyRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	db := openURL(t, u)
	searchFixture(t, db)
	reader := readerURL(t, u)
	ro, err := OpenExisting(ctx, reader)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if hits, err := ro.Search(ctx, "world cup", SearchOptions{}); err != nil || len(hits) == 0 {
		t.Errorf("Search as a reader = %v, %v", hits, err)
	}
	if _, err := ro.LastRuns(ctx, ingest.Trending); err != nil {
		t.Errorf("LastRuns as a reader: %v", err)
	}
	if _, err := ro.StartRun(ctx, "US", "", ingest.Trending, t0); err == nil {
		t.Errorf("a reader started a run")
	}
}

// readerURL makes a role that may only SELECT in u's database.
func readerURL(t *testing.T, u string) string {
	t.Helper()
	parsed, _ := url.Parse(u)
	role := "reader_" + strings.TrimPrefix(parsed.Path, "/")
	admin, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN`, `GRANT USAGE ON SCHEMA public TO ` + role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ` + role} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP OWNED BY ` + role)
		_, _ = admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	parsed.User = url.User(role)
	return parsed.String()
}

// Writable tells a server that takes writes from one that does not.
func TestPGWritable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	if err := openURL(t, u).Writable(ctx); err != nil {
		t.Errorf("Writable on a primary: %v", err)
	}
	parsed, _ := url.Parse(u)
	q := parsed.Query()
	q.Set("default_transaction_read_only", "on")
	parsed.RawQuery = q.Encode()
	if err := openURL(t, parsed.String()).Writable(ctx); err == nil {
		t.Errorf("Writable on a read-only session: nil, want an error")
	}
}

// Hosts that start together on a server whose transactions default to
// repeatable read still apply each step once: the migration reads the
// steps after it holds the lock.
func TestPGMigrateUnderRepeatableRead(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t) + "&default_transaction_isolation=repeatable%20read"
	hold, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	ctx := context.Background()
	conn, err := hold.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(pgLockKey)); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			db, err := Open(ctx, u)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	awaitLockWaits(t, conn, 2)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, int64(pgLockKey)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("open beside another host: %v", err)
		}
	}
}

func TestRedactHidesPasswords(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:s3cret@h/db",
		"postgres://u@h/db?password=s3cret",
		"postgresql://u@h/db?sslmode=verify-full&sslpassword=s3cret",
	} {
		if got := Redact(raw); strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q", raw, got)
		}
	}
}

// A database whose default collation is not C (a server made under an
// en_US locale) sorts text as SQLite does: by its bytes.
func TestPGTextSortsAsSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := sql.Open("pgx", pgtest.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("icu_%d", time.Now().UnixNano())
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`); err != nil {
		t.Skipf("no ICU collation on this server: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) })
	icu := strings.Replace(pgtest.AdminURL(t), "/postgres?", "/"+name+"?", 1)
	got := map[string]string{}
	for kind, u := range map[string]string{"sqlite": t.TempDir() + "/i.db", "postgres en-US": icu} {
		db := openURL(t, u)
		for _, n := range []string{"alice", "Zed", "bob-2", "bob1"} {
			if _, err := clients.New(db).AddToken(ctx, n, "free", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		toks, err := clients.New(db).Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tk := range toks {
			names = append(names, tk.Name)
		}
		got[kind] = fmt.Sprint(names)
	}
	if got["sqlite"] != got["postgres en-US"] {
		t.Errorf("tokens in order: SQLite %s, PostgreSQL (en-US) %s", got["sqlite"], got["postgres en-US"])
	}
}

// A database of step 1 holding videos is taken to the current step when a
// store opens it, with each video's regions in the search index.
func TestPGUpgradeFromStep1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE schema_version (step INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := pgMigrations[0].apply(ctx, tx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO schema_version VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	for id, regions := range map[string][]string{"derby": {"GB", "US"}, "final": {"DE"}, "nowhere": nil} {
		var vid int64
		err := tx.QueryRow(`INSERT INTO videos (id, title, description, tags, channel_id, channel_title, category_id,
  duration, first_seen_ms, last_seen_ms) VALUES ($1, $2, '', '[]', 'UC1', 'Channel', '17', 'PT1M', 1, 1) RETURNING vid`,
			id, id+" highlights").Scan(&vid)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO video_docs (vid, doc) VALUES ($1, $2::tsvector)`, vid, tsDoc(id+" highlights", "", "", "Channel"))
		}
		for _, r := range regions {
			if err == nil {
				_, err = tx.Exec(`INSERT INTO video_regions (vid, region) VALUES ($1, $2)`, vid, r)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db := openURL(t, u)
	integrityCheck(t, db)
	for region, want := range map[string][]string{"": {"derby", "final", "nowhere"}, "GB": {"derby"}, "US": {"derby"}, "DE": {"final"}, "FR": nil} {
		hits, err := db.Search(ctx, "highlights", SearchOptions{Region: region})
		got := ids(hits)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("after the upgrade, Search(highlights, %q) = %v, %v; want %v", region, got, err, want)
		}
	}
}

// Two hosts storing one video in two regions at once, the second waiting
// on the first's transaction, both for a video already stored and for a
// new one: the search index holds both regions.
func TestPGRegionsFromTwoHostsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openURL(t, pgtest.URL(t))
	host := openURL(t, db.path)
	run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("old", "derby highlights")))
	for _, v := range []ingest.Video{vid("old", "derby highlights"), vid("new", "final highlights")} {
		at := t0.Add(time.Hour)
		first, err := host.StartRun(ctx, "GB", "", ingest.Trending, at)
		if err != nil {
			t.Fatal(err)
		}
		second, err := db.StartRun(ctx, "DE", "", ingest.Trending, at)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := host.Writer().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := host.savePage(ctx, tx, first, page(ingest.Trending, "GB", 1, at, v)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- db.SavePage(ctx, second, page(ingest.Trending, "DE", 1, at, v)) }()
		awaitLockWaits(t, tx, 1)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	integrityCheck(t, db)
	for _, region := range []string{"GB", "DE"} {
		hits, err := db.Search(ctx, "highlights", SearchOptions{Region: region})
		if got := ids(hits); err != nil || len(got) != 2 {
			t.Errorf("Search(highlights, %s) = %v, %v; want old and new", region, got, err)
		}
	}
}

// A prepared export is planned once for any range (PostgreSQL's generic
// plan): its rows must come out of the entries' order, with no sort above
// the read of the videos, which would sort every row's text.
func TestPGExportSortsNarrowRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openURL(t, pgtest.URL(t))
	for i, region := range []string{"US", "GB", "DE"} {
		at := t0.Add(time.Duration(i) * time.Hour)
		id := run(t, db, ingest.Trending, region, at, page(ingest.Trending, region, 1, at, vid("a"+region, "A"), vid("b"+region, "B")))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Writer().ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Writer().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	where, args := ExportFilter{Since: t0.Add(-time.Hour), Until: t0.Add(24 * time.Hour)}.where()
	for _, q := range []string{`SET plan_cache_mode = force_generic_plan`, `PREPARE export_plan AS ` + rebind(db.q.export(where))} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	values := make([]string, len(args)) // EXPLAIN EXECUTE takes no parameters of its own
	for i, a := range args {
		values[i] = fmt.Sprint(a.(int64)) // the range's two instants
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN (COSTS OFF) EXECUTE export_plan(`+strings.Join(values, ", ")+`)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The plan's first node is what makes the rows' order.
	if len(plan) == 0 || strings.Contains(plan[0], "Sort") {
		t.Errorf("the export's generic plan sorts the joined rows:\n%s", strings.Join(plan, "\n"))
	}
	if got, want := exported(t, db, ExportFilter{Since: t0.Add(-time.Hour), Until: t0.Add(24 * time.Hour)}), "aUS US 1 r1|bUS US 2 r1|aGB GB 1 r2|bGB GB 2 r2|aDE DE 1 r3|bDE DE 2 r3"; got != want {
		t.Errorf("export: %s, want %s", got, want)
	}
}

// awaitLockWaits returns once n sessions on the test's database wait for a
// lock (PostgreSQL's own account of them), and fails after a deadline.
func awaitLockWaits(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var waiting int
		if err := q.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions wait for a lock after a minute, want %d", waiting, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
