package web

// The pages' templates and how a page or its error is sent.

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
)

// pages holds one template set per page, each with the shared layout.
type pages struct {
	byName map[string]*template.Template
}

var pageNames = []string{"front", "operator", "chart", "nochart", "video", "search", "login", "error"}

// parsePages parses the pages; signOut shows the sign-out button, operator
// the link to the operator's page (not on a public site, whose readers it
// would only send to a sign-in), names the regions.
func parsePages(signOut, operator bool, asset func(string) string, names places) (*pages, error) {
	funcs := template.FuncMap{"signOut": func() bool { return signOut }, "operator": func() bool { return operator }, "asset": asset, "plural": plural, "deref": func(p *int) int { return *p }, "thumbnail": thumbnail, "addf": func(a, b float64) float64 { return a + b },
		"subf": func(a, b float64) float64 { return a - b }, "midf": func(a, b float64) float64 { return (a + b) / 2 }, "duration": duration, "age": age, "youtube": youTubeURL, "plural64": plural64,
		"num64": func(n int) string { return num(int64(n)) }, "add": func(a, b int) int { return a + b },
		"num": num, "when": when, "spark": sparkline, "marks": marks,
		"stampTime": stampTime, "abs": func(n int) int { return max(n, -n) }, "shortNote": shortNote,
		"dur": report.ShortDuration, "chartLabel": names.chart, "chartPath": chartPath, "regionList": names.list,
		"rowLabel": func(code string) string { return chartLabel(splitChart(code)) },
		"rowPath":  func(code string) string { return chartPath(splitChart(code)) },
		"since":    since, "short": short, "channel": channelURL, "language": languageName, "region": names.name,
		"moved": movementText, "gained": func(p *int64) string {
			if *p < 0 {
				return "−" + short(-*p)
			}
			return "+" + short(*p)
		}, "num64s": func(p *int64) string { return num(*p) }, "hitTitle": hitTitle, "hitSnippet": hitSnippet}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse %s page: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// render executes a page into a buffer first, so a template error is a
// clean 500, never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	set, cc := s.pages, cacheFor(status)
	if s.operatorHeader(r) {
		set, cc = s.signedPages, personal
	} else {
		s.varyCookie(w.Header())
	}
	var buf bytes.Buffer
	if err := set.byName[name].Execute(&buf, data); err != nil {
		s.cfg.Logger.Error("web: render", "page", name, ingest.LogErr, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", cc)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// cacheFor is the Cache-Control of an answer: one that may be kept is
// revalidated each time (transport.go); an error is not kept.
func cacheFor(status int) string {
	if status == http.StatusOK {
		return revalidate
	}
	return "no-store"
}

// errorView is a page's error, as a person reads it.
type errorView struct {
	Title   string
	Status  int
	Message string
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", errorView{Title: http.StatusText(status), Status: status, Message: msg})
}

func (s *Server) pageFail(w http.ResponseWriter, r *http.Request, err error) {
	status, _, _, msg := s.classify(r, err)
	s.pageError(w, r, status, msg)
}
