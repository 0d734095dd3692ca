package web

// The pages' templates and how a page or its error is sent.

import (
	"fmt"
	"html/template"
	"net/http"

	"github.com/ingestworks/ingest"

	"github.com/ingestworks/ingest/web/transport"
)

// pages holds one template set per page, each with the shared layout.
type pages struct {
	byName map[string]*template.Template
}

var pageNames = []string{"front", "operator", "chart", "nochart", "video", "search", "login", "error", "worldwide"}

// parsePages parses the pages with the templates' functions.
func parsePages(funcs template.FuncMap) (*pages, error) {
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
	set, cc := s.pages, transport.CacheFor(status)
	if s.operatorHeader(r) {
		set, cc = s.signedPages, personal
	} else {
		s.varyCookie(w.Header())
	}
	sc := transport.TakeScratch()
	defer sc.GiveBack()
	if err := set.byName[name].Execute(&sc.Buf, data); err != nil {
		s.cfg.Logger.Error("web: render", "page", name, ingest.LogErr, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", cc)
	w.WriteHeader(status)
	w.Write(sc.Buf.Bytes())
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
	retryLater(w, status)
	s.pageError(w, r, status, msg)
}

// option is one choice of a select: a region, a category, a language or
// an order.
type option struct {
	Code, Name string
	Current    bool
}
