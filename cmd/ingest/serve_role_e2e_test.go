package main

import (
	"database/sql"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
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

	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	role := "serve_" + strings.TrimPrefix(u.Path, "/")
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "role="+role, "-v", "owner="+u.User.Username(),
		"-f", serveRoleSQL, owner)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql -f %s: %v\n%s", serveRoleSQL, err, out)
	}
	admin, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP OWNED BY ` + role)
		_, _ = admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	asRole := *u
	asRole.User = url.UserPassword(role, pgPassword)

	h.set("INGEST_DB", asRole.String())
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

	ro, err := sql.Open("pgx", asRole.String())
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
