package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// CookieName holds the session id a sign-in sets: a random id the server
// keeps, never the access token itself.
const CookieName = "ingest_session"

// DefaultSessionTTL is how long a sign-in lasts when Config.SessionTTL is
// zero.
const DefaultSessionTTL = 12 * time.Hour

// maxSessions bounds the sessions one server keeps: signing in is behind
// the token, so only its holders can fill the table, but a loop must not
// grow it without end.
const maxSessions = 10000

// sessions are the signed-in browsers: id -> expiry, in memory (a restart
// signs everyone out, which is the safe side).
type sessions struct {
	mu  sync.Mutex
	ttl time.Duration
	now func() time.Time
	ids map[string]time.Time
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &sessions{ttl: ttl, now: now, ids: map[string]time.Time{}}
}

// start makes a new session and returns its id.
func (s *sessions) start() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.ids) >= maxSessions {
		for k, exp := range s.ids {
			if !now.Before(exp) {
				delete(s.ids, k)
			}
		}
		for k := range s.ids { // still full: drop any one
			if len(s.ids) < maxSessions {
				break
			}
			delete(s.ids, k)
		}
	}
	s.ids[id] = now.Add(s.ttl)
	return id, nil
}

// valid reports whether id is a live session; an expired one is dropped.
func (s *sessions) valid(id string) bool {
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.ids[id]
	if ok && !s.now().Before(exp) {
		delete(s.ids, id)
		return false
	}
	return ok
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// authorized asks for the access token as a bearer header (scripts) or
// for a live session cookie (browsers that signed in); refuse answers a
// request with neither.
func (s *Server) authorized(h http.Handler, refuse http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.tokenOK(r) {
			h.ServeHTTP(w, r)
			return
		}
		refuse(w, r)
	})
}

func apiUnauthorized(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ingest"`)
	apiError(w, http.StatusUnauthorized, "unauthorized", "", "send the access token (INGEST_UI_TOKEN) as Authorization: Bearer <token>")
}

// signIn sends a browser to the sign-in, which brings it back to the page
// it asked for.
func signIn(w http.ResponseWriter, r *http.Request) {
	to := "/login"
	if next := r.URL.RequestURI(); r.Method == http.MethodGet && next != "/" {
		to += "?next=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (s *Server) tokenOK(r *http.Request) bool {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.same(auth) {
		return true
	}
	c, err := r.Cookie(CookieName)
	return err == nil && s.sessions.valid(c.Value)
}

// same compares in constant time, so the token cannot be guessed byte by
// byte from how long a refusal takes.
func (s *Server) same(got string) bool {
	return s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// localPath is next when it is a path on this server, "/" otherwise: the
// sign-in never sends a browser to another site.
func localPath(next string) string {
	// Browsers drop tabs and newlines from a URL and read \ as /: a path
	// holding any of them, or a control character, could become //host.
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.ContainsFunc(next, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == '\\'
	}) {
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", loginView{Title: "Sign in", Open: s.cfg.Token == "",
		Next: localPath(r.URL.Query().Get("next")), Out: r.URL.Query().Has("out")})
}

// crossSite refuses a form posted from another site: the browser's
// Sec-Fetch-Site, or else its Origin against the Host, says where it came
// from (the session cookie is SameSite=Strict as well).
func (s *Server) crossSite(w http.ResponseWriter, r *http.Request) bool {
	if err := s.csrf.Check(r); err != nil {
		s.pageError(w, r, http.StatusForbidden, "This form was sent from another site; sign in from this dashboard's own page.")
		return true
	}
	return false
}

// login starts a session when the form's token is right and goes back to
// the page that was asked for.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.crossSite(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	next := localPath(r.PostFormValue("next"))
	if s.cfg.Token == "" || !s.same(r.PostFormValue("token")) {
		s.render(w, http.StatusUnauthorized, "login", loginView{Title: "Sign in", Wrong: s.cfg.Token != "", Next: next})
		return
	}
	id, err := s.sessions.start()
	if err != nil {
		s.pageError(w, r, http.StatusInternalServerError, "Could not start a session.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(s.sessions.ttl / time.Second)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if s.crossSite(w, r) {
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		s.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	http.Redirect(w, r, "/login?out=1", http.StatusSeeOther)
}

type loginView struct {
	Title string
	Open  bool // no token is asked
	Wrong bool
	Next  string
	Out   bool
}
