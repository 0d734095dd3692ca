package web

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// CookieName holds the access token a login sets.
const CookieName = "ingest_ui_token"

// authorized asks for the access token: as a bearer header (scripts) or
// as the cookie the login form sets (browsers).
// refuse answers a request without it.
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

func signIn(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *Server) tokenOK(r *http.Request) bool {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.same(auth) {
		return true
	}
	c, err := r.Cookie(CookieName)
	return err == nil && s.same(c.Value)
}

// same compares in constant time, so the token cannot be guessed byte by
// byte from how long a refusal takes.
func (s *Server) same(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", loginView{Title: "Sign in", Open: s.cfg.Token == ""})
}

// login sets the cookie when the form's token is right.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if s.cfg.Token == "" || !s.same(r.PostFormValue("token")) {
		s.render(w, http.StatusUnauthorized, "login", loginView{Title: "Sign in", Wrong: s.cfg.Token != ""})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.cfg.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

type loginView struct {
	Title string
	Open  bool // no token is asked
	Wrong bool
}
