package deploy

import (
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
// sends the chart picker's query to its chart, and serves none of the
// publish's own files.
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
	}
	for f, body := range files {
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
		{"/api/v1", "index", "application/json"},
		{"/robots.txt", "robots", "text/plain"},
		{"/sitemap.xml", "sitemap", "application/xml"},
		{"/static/style.8136f70eac.css", "css", "text/css"},
		{"/static/yt.svg", "svg", "image/svg+xml"},
		{"/videos/a-b_c", "video", "text/html"},
	} {
		res, body := get(tc.path)
		if res.StatusCode != 200 || body != tc.body || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %q %s, want 200 %q %s", tc.path, res.StatusCode, body, res.Header.Get("Content-Type"), tc.body, tc.ctype)
		}
	}
	if res, _ := get("/charts?region=GB"); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "/charts/GB") {
		t.Errorf("the chart picker's query: %d to %q, want 303 to /charts/GB", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/.ingest-published", "/search?q=x", "/charts/XX"} {
		if res, _ := get(p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
}
