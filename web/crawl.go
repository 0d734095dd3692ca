package web

// What crawlers read: robots.txt, which keeps them off what floods
// (search with a query, a chart's orders) and off what is not for them
// (the API, the operator's page, the sign-in), and lets them read every
// page another names as its canonical address: an earlier run's
// permalink among them, its first build within the site's budget
// (budget.go) like any anonymous reader's; and the
// sitemap (sitemaps.org's protocol), which names the pages worth reading:
// the front page, the worldwide page, each chart, and the videos of the
// regions' latest charts. Nothing of the operator's is in either.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/transport"
)

// sitemapMax is how many addresses one sitemap file holds at most, the
// protocol's bound; past it /sitemap.xml is an index of files of that
// many.
const sitemapMax = 50000

// robots is robots.txt (RFC 9309) without its Sitemap line.
const robots = `# ingest: YouTube's trending charts. The pages are for crawling, an
# earlier run's permalink too; search results, a chart's orders, the API
# and the operator's pages are not.
User-agent: *
Allow: /
Disallow: /search?
Disallow: /api/
Disallow: /operator
Disallow: /login
Disallow: /?region=
Disallow: /charts/*sort=
`

func (s *Server) robotsTxt(w http.ResponseWriter, r *http.Request) {
	body := robots
	if s.cfg.PublicURL != nil {
		body += "Sitemap: " + s.link("/sitemap.xml") + "\n"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", transport.CacheFor(http.StatusOK))
	edge.Show(w.Header(), "robots")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(body))
}

// sitemapURL is one address of a sitemap, or one file of an index.
type sitemapURL struct {
	Loc     string `xml:"loc"`
	Lastmod string `xml:"lastmod,omitempty"`
}

type urlSet struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

type sitemapIndex struct {
	XMLName  xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []sitemapURL `xml:"sitemap"`
}

// sitemapURLs are the addresses the sitemap names, in its order: the
// front page, the worldwide page, each chart, each video of the regions'
// latest charts; each with when its chart last ran where that is known.
func (s *Server) sitemapURLs(r *http.Request) ([]sitemapURL, error) {
	latest, err := s.cfg.DB.LatestCharts(r.Context())
	if err != nil {
		return nil, err
	}
	charts, err := s.charts.list(r.Context(), s.cfg.DB)
	if err != nil {
		return nil, err
	}
	ran := map[string]time.Time{} // each region's latest unfiltered run
	videos := map[string]time.Time{}
	var order []string
	var newest time.Time
	for _, e := range latest {
		ran[e.Region] = e.At
		newest = maxTime(newest, e.At)
		if _, ok := videos[e.ID]; !ok {
			order = append(order, e.ID)
		}
		videos[e.ID] = maxTime(videos[e.ID], e.At)
	}
	mod := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	out := []sitemapURL{{Loc: s.link("/"), Lastmod: mod(newest)}, {Loc: s.link("/worldwide"), Lastmod: mod(newest)}}
	for _, c := range charts {
		u := sitemapURL{Loc: s.link(chartPath(c.Region, c.Category))}
		if c.Category == "" {
			u.Lastmod = mod(ran[c.Region])
		}
		out = append(out, u)
	}
	slices.Sort(order)
	for _, id := range order {
		out = append(out, sitemapURL{Loc: s.link(videoPath(id)), Lastmod: mod(videos[id])})
	}
	return out, nil
}

// sitemap is /sitemap.xml: the addresses, or past sitemapMax an index of
// the files that hold them (/sitemaps/N.xml). Without Config.PublicURL
// there is none: a sitemap's addresses are absolute.
func (s *Server) sitemap(w http.ResponseWriter, r *http.Request) {
	if !s.sitemapServed(w, r) {
		return
	}
	urls, err := s.sitemapURLs(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	setModified(w.Header(), newestMod(urls))
	if len(urls) <= s.sitemapMax() {
		s.sendXML(w, r, urlSet{URLs: urls})
		return
	}
	var idx sitemapIndex
	for n := 1; (n-1)*s.sitemapMax() < len(urls); n++ {
		idx.Sitemaps = append(idx.Sitemaps, sitemapURL{Loc: s.link("/sitemaps/" + strconv.Itoa(n) + ".xml")})
	}
	s.sendXML(w, r, idx)
}

// sitemapPart is /sitemaps/N.xml, the Nth file of the index.
func (s *Server) sitemapPart(w http.ResponseWriter, r *http.Request) {
	if !s.sitemapServed(w, r) {
		return
	}
	num, ok := strings.CutSuffix(r.PathValue("file"), ".xml")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 || strconv.Itoa(n) != num {
		s.pageError(w, r, http.StatusNotFound, "No such sitemap: "+r.URL.Path)
		return
	}
	urls, err := s.sitemapURLs(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	from := (n - 1) * s.sitemapMax()
	if len(urls) <= s.sitemapMax() || from >= len(urls) {
		s.pageError(w, r, http.StatusNotFound, "No such sitemap: "+r.URL.Path)
		return
	}
	part := urls[from:min(len(urls), from+s.sitemapMax())]
	setModified(w.Header(), newestMod(part))
	s.sendXML(w, r, urlSet{URLs: part})
}

// newestMod is the latest lastmod of urls: a sitemap's own content time
// (the epoch when none says one, so that it stays the same until the
// first run).
func newestMod(urls []sitemapURL) time.Time {
	newest := time.Unix(0, 0)
	for _, u := range urls {
		if t, err := time.Parse(time.RFC3339, u.Lastmod); err == nil {
			newest = maxTime(newest, t)
		}
	}
	return newest
}

// sitemapServed answers 404 without Config.PublicURL, saying why.
func (s *Server) sitemapServed(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.PublicURL == nil {
		s.pageError(w, r, http.StatusNotFound, "No sitemap: this site was started without --public-url, and a sitemap's addresses are absolute.")
		return false
	}
	return true
}

// sitemapMax is the bound of one sitemap file, smaller in tests.
func (s *Server) sitemapMax() int {
	if s.sitemapBound > 0 {
		return s.sitemapBound
	}
	return sitemapMax
}

// sendXML writes v as application/xml.
func (s *Server) sendXML(w http.ResponseWriter, r *http.Request, v any) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(v); err != nil {
		s.pageFail(w, r, fmt.Errorf("sitemap: %w", err))
		return
	}
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Cache-Control", transport.CacheFor(http.StatusOK))
	edge.Show(w.Header(), "sitemap")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// videoPath is a video's page.
func videoPath(id string) string { return "/videos/" + url.PathEscape(id) }
