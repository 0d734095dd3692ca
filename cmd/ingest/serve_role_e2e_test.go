package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/store"
)

// serveRoleSQL is the role the public replicas log in as, as shipped.
const serveRoleSQL = "../../deploy/kubernetes-postgres/serve-role.sql"

// TestServeAsTheReplicasRole: `serve --public` runs as the role
// deploy/kubernetes-postgres/serve-role.sql makes, without the upstream's
// key, on the database's own API limiter (no REDIS_URL): its pages and its
// API answer, each client's count and the token's last use are written,
// nothing in its log is refused, and the role can change nothing else.
// A grant the file lacks is a refusal here.
func TestServeAsTheReplicasRole(t *testing.T) {
	t.Parallel()
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (Debian's postgresql-client): the role's file is run with it")
	}
	h := newHarness(t)
	owner := h.withPostgres()
	h.mustRun(0, "run", "--once", "--regions", "US")
	token := lastLine(h.mustRun(0, "tokens", "add", "acme", "--plan", "standard").stdout)

	role, asRole, admin := serveRole(t, psql, owner)

	h.set("INGEST_DB", asRole)
	h.unset("YOUTUBE_API_KEY")
	h.set("INGEST_UI_TOKEN", uiToken)
	addr := closedAddr(t)
	p := h.start("serve", "--public", "--listen", addr, "--regions", "US")
	base := "http://" + addr
	if !waitFor(30*time.Second, func() bool { return apiGetOK(base + "/readyz") }) {
		t.Fatalf("serve --public as %s never became ready\n%s", role, p.out)
	}
	for _, path := range []string{"/api/v1/search?q=video", "/api/v1/search?q=video"} {
		if a := apiGet(t, base, path, token, ""); a.code != 200 || a.body == "" {
			t.Errorf("GET %s as %s, with a client's token: %d\n%s", path, role, a.code, a.body)
		}
	}
	for _, path := range []string{"/api/v1/runs", "/api/v1/quota"} {
		if a := apiGet(t, base, path, uiToken, ""); a.code != 200 || a.body == "" {
			t.Errorf("GET %s as %s, with the operator's token: %d\n%s", path, role, a.code, a.body)
		}
	}
	if code, body := get(t, base+"/"); code != 200 {
		t.Errorf("GET / as a reader, as %s: %d\n%s", role, code, body)
	}
	signInAndOut(t, base, role)
	var counts, used int
	if err := admin.QueryRow(`SELECT count(*) FROM api_limits`).Scan(&counts); err != nil || counts == 0 {
		t.Errorf("api_limits after the API's answers: %d rows (%v), want the client's count", counts, err)
	}
	if err := admin.QueryRow(`SELECT count(*) FROM api_tokens WHERE last_used_ms IS NOT NULL`).Scan(&used); err != nil || used != 1 {
		t.Errorf("api_tokens: %d used (%v), want the token's last use written", used, err)
	}
	if out := p.out.String(); strings.Contains(out, "permission denied") || strings.Contains(out, "level=ERROR") {
		t.Errorf("serve as %s was refused something:\n%s", role, out)
	}

	ro, err := sql.Open("pgx", asRole)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, q := range []string{`DELETE FROM videos`, `UPDATE runs SET status = 'ok'`, `DELETE FROM ledger`,
		`UPDATE api_tokens SET plan = 'unlimited'`, `CREATE TABLE mine (x int)`} {
		if _, err := ro.Exec(q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("as %s, %s: %v, want permission denied", role, q, err)
		}
	}
}

// serveRole runs serve-role.sql on owner's database with psql, as the
// tables' owner, and returns the role it made, a URL of it, and the
// owner's connection.
// signInAndOut signs in to the operator's pages of the serve at base with
// the UI token, opens one with the session, and signs out: a session is a
// row the replicas' role writes and deletes.
func signInAndOut(t *testing.T, base, role string) {
	t.Helper()
	code, session := signIn(t, base, uiToken)
	if code != http.StatusSeeOther || session == nil {
		t.Fatalf("sign-in as %s: %d, session %v; want 303 and a session", role, code, session)
	}
	if res := sendForm(t, http.MethodGet, base+"/operator", nil, session); res.StatusCode != http.StatusOK {
		t.Errorf("/operator with the session, as %s: %d, want 200", role, res.StatusCode)
	}
	if res := sendForm(t, http.MethodPost, base+"/logout", nil, session); res.StatusCode != http.StatusSeeOther {
		t.Errorf("sign-out as %s: %d, want 303", role, res.StatusCode)
	}
	if res := sendForm(t, http.MethodGet, base+"/operator", nil, session); res.StatusCode == http.StatusOK {
		t.Errorf("/operator with the session signed out, as %s: 200, want it refused", role)
	}
}

// applyServeRole runs the replicas' role file on the database at owner,
// as its owner, for role: as the docs say, once, and again after an
// upgrade that adds a table serve writes.
func applyServeRole(t *testing.T, psql, owner, role string) {
	t.Helper()
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "role="+role, "-v", "owner="+u.User.Username(),
		"-f", serveRoleSQL, owner)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql -f %s: %v\n%s", serveRoleSQL, err, out)
	}
}

func serveRole(t *testing.T, psql, owner string) (role, asRole string, admin *sql.DB) {
	t.Helper()
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	role = "serve_" + strings.TrimPrefix(u.Path, "/")
	applyServeRole(t, psql, owner, role)
	if admin, err = sql.Open("pgx", owner); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP OWNED BY ` + role)
		_, _ = admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	u.User = url.UserPassword(role, pgPassword)
	return role, u.String(), admin
}

// A replica of the new binary started, as the replicas' role, on the
// last release's schema cannot upgrade it: it does not start (exit 2),
// naming the schema, the fix (ingest db migrate) and the refusal; the database is left at the release's step for the daemon, or
// db migrate, to upgrade. Once upgraded, the same replica starts.
func TestServeAsTheReplicasRoleOnTheLastRelease(t *testing.T) {
	t.Parallel()
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (Debian's postgresql-client): the role's file is run with it")
	}
	_, pgAt := releasedSteps(t)
	if pgAt >= store.PGSchemaVersion {
		t.Skip("this tree writes the release's PostgreSQL schema: nothing to upgrade")
	}
	h := newHarness(t)
	owner := h.withPostgres()
	q, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.Exec(`CREATE TABLE schema_version (step INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	releasedDatabase(t, q, "postgres", pgAt, func(step int) string { return fmt.Sprintf("INSERT INTO schema_version VALUES (%d, 0)", step) })
	role, asRole, admin := serveRole(t, psql, owner)

	h.set("INGEST_DB", asRole)
	h.unset("YOUTUBE_API_KEY")
	res := h.run("serve", "--listen", closedAddr(t))
	if res.code != 2 || !strings.Contains(res.stderr, fmt.Sprintf("schema version %d", pgAt)) ||
		!strings.Contains(res.stderr, "ingest db migrate") || !strings.Contains(res.stderr, "permission denied") {
		t.Errorf("serve as the replicas' role on the release's schema: want exit 2 naming the schema, ingest db migrate and why it could not upgrade it\n%s", res)
	}
	var step int
	if err := admin.QueryRow(`SELECT max(step) FROM schema_version`).Scan(&step); err != nil || step != pgAt {
		t.Errorf("schema step after the replica's start: %d (%v), want the release's %d", step, err, pgAt)
	}
	h.set("INGEST_DB", owner)
	h.mustRun(0, "db", "migrate")
	applyServeRole(t, psql, owner, role) // the upgrade added tables serve writes
	h.set("YOUTUBE_API_KEY", testKey)    // the daemon's pass, as the owner: the ledger then names the quota key
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.unset("YOUTUBE_API_KEY")
	h.set("INGEST_DB", asRole)
	h.set("INGEST_UI_TOKEN", uiToken)
	base := startServe(t, h, "--public")
	if code, body := get(t, base+"/"); code != 200 {
		t.Errorf("serve as the replicas' role after db migrate: %d\n%s", code, body)
	}
	signInAndOut(t, base, role)
}
