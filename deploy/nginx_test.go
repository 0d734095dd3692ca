package deploy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNginxServesAPublishedDirectory: the shipped server block, run by the
// real nginx over a directory laid out as ingest publish lays it out,
// answers each address from its file with the type the server sends,
// sends the chart picker's query to its chart in a path alone, compresses
// every type the site sends with a Vary a cache keys on, keeps no error,
// sends serve's CORS and security headers, serves what the operator keeps
// in .well-known/ and none of the publish's own files, and answers a JSON
// address it does not hold in JSON.
func TestNginxServesAPublishedDirectory(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if nginx, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian's nginx package)")
		}
	}
	dir := t.TempDir()
	// nginx started as root reads as nobody: the test's directories open.
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	site := filepath.Join(dir, "site")
	files := map[string]string{
		"index.html": "front", "charts/GB/index.html": "chart", "charts/GB/feed/index.atom": "feed",
		"api/v1/charts/GB/index.json": "json", "api/v1/index.json": "index", "robots.txt": "robots",
		"sitemap.xml": "sitemap", "static/style.8136f70eac.css": "css", "static/yt.svg": "svg",
		"videos/a-b_c/index.html": "video", ".ingest-published": "list",
		".well-known/security.txt": "contact",
	}
	// Each body is long enough to be worth compressing, as the site's are.
	pad := strings.Repeat(" ", 600)
	for f, body := range files {
		body += pad
		p := filepath.Join(site, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf, err := os.ReadFile("nginx/ingest-published.conf")
	if err != nil {
		t.Fatal(err)
	}
	server := strings.NewReplacer("root /srv/ingest/site;", "root "+site+";", "listen 8080;", "listen "+addr+";", "listen [::]:8080;", "").Replace(string(conf))
	os.WriteFile(filepath.Join(dir, "site.conf"), []byte(server), 0o644)
	main := fmt.Sprintf(`daemon off; pid %[1]s/nginx.pid; error_log %[1]s/error.log;
events {}
http { include /etc/nginx/mime.types; default_type application/octet-stream; access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  include %[1]s/site.conf; }
`, dir)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644)
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM: the master stops its workers, then itself.
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		for range 100 {
			res, err := c.Get("http://" + addr + path)
			if err == nil {
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res, string(b)
			}
			time.Sleep(50 * time.Millisecond)
		}
		errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		t.Fatalf("nginx never answered on %s\n%s", addr, errLog)
		return nil, ""
	}
	for _, tc := range []struct{ path, body, ctype string }{
		{"/", "front", "text/html"},
		{"/charts/GB", "chart", "text/html"},
		{"/charts/GB?sort=views", "chart", "text/html"},
		{"/charts/GB/feed", "feed", "application/atom+xml"},
		{"/api/v1/charts/GB", "json", "application/json"},
		{"/api/v1/charts/gb", "json", "application/json"},
		{"/api/v1", "index", "application/json"},
		{"/robots.txt", "robots", "text/plain"},
		{"/sitemap.xml", "sitemap", "application/xml"},
		{"/static/style.8136f70eac.css", "css", "text/css"},
		{"/static/yt.svg", "svg", "image/svg+xml"},
		{"/videos/a-b_c", "video", "text/html"},
	} {
		res, body := get(tc.path)
		body = strings.TrimSuffix(body, pad)
		if res.StatusCode != 200 || body != tc.body || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %q %s, want 200 %q %s", tc.path, res.StatusCode, body, res.Header.Get("Content-Type"), tc.body, tc.ctype)
		}
		// The client asked for gzip and took it off: every type was sent
		// compressed, and said so to a cache in front.
		if !res.Uncompressed || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("GET %s: compressed %v, Vary %q, want gzip with Vary: Accept-Encoding", tc.path, res.Uncompressed, res.Header.Get("Vary"))
		}
		for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("GET %s: %s %q, want %q", tc.path, k, got, want)
			}
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q, want serve's", tc.path, csp)
		}
		wantCORS := ""
		if strings.HasPrefix(tc.path, "/api/v1") {
			wantCORS = "*"
		}
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != wantCORS {
			t.Errorf("GET %s: Access-Control-Allow-Origin %q, want %q", tc.path, got, wantCORS)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "public") {
			t.Errorf("GET %s: Cache-Control %q, want public", tc.path, cc)
		}
	}
	for _, tc := range []struct {
		ask, to string
		status  int
	}{
		{"/charts?region=GB", "/charts/GB", http.StatusSeeOther},
		{"/charts?region=gb", "/charts/GB", http.StatusSeeOther},
		{"/charts?region=Gb&sort=views", "/charts/GB", http.StatusSeeOther},
		{"/charts", "/", http.StatusSeeOther},
		{"//charts//GB?sort=views", "/charts/GB?sort=views", http.StatusTemporaryRedirect},
		{"/charts/gb", "/charts/GB", http.StatusMovedPermanently},
		{"/charts/Gb/feed?x=1", "/charts/GB/feed", http.StatusMovedPermanently},
	} {
		// A path alone: nginx's own port and host are not the readers'.
		// A page's one name never changes: that redirect any cache keeps.
		res, _ := get(tc.ask)
		cc := "private, no-store"
		if tc.status == http.StatusMovedPermanently {
			cc = "public, max-age=86400"
		}
		if res.StatusCode != tc.status || res.Header.Get("Location") != tc.to || res.Header.Get("Cache-Control") != cc {
			t.Errorf("GET %s: %d to %q, %q, want %d to %s, %s", tc.ask, res.StatusCode, res.Header.Get("Location"), res.Header.Get("Cache-Control"), tc.status, tc.to, cc)
		}
	}
	if res, _ := get("/charts?region=GBR"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /charts?region=GBR: %d, want 400 as serve answers", res.StatusCode)
	}
	if res, body := get("/.well-known/security.txt"); res.StatusCode != http.StatusOK || strings.TrimSuffix(body, pad) != "contact" {
		t.Errorf("GET /.well-known/security.txt: %d %q, want the operator's file", res.StatusCode, body)
	}
	for _, p := range []string{"/.ingest-published", "/search?q=x", "/charts/XX", "/api/v1/charts/XX"} {
		res, body := get(p)
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("GET %s: %d, %q, want 404 kept by no cache", p, res.StatusCode, res.Header.Get("Cache-Control"))
		}
		// A client of the JSON reads one shape of error, as serve's.
		if strings.HasPrefix(p, "/api/") && (!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !json.Valid([]byte(body))) {
			t.Errorf("GET %s: %s %q, want a JSON error", p, res.Header.Get("Content-Type"), body)
		}
	}
}
