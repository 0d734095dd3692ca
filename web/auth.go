package web

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/throttle"
)

// authorized asks for a live session cookie (browsers that signed in) or
// for the access token as a bearer header (scripts), tried under the
// throttle; refuse answers a request without either, v.Wait > 0 when the
// token was not compared because its address (or every address) must
// wait.
func (s *Server) authorized(h http.Handler, refuse func(w http.ResponseWriter, r *http.Request, v throttle.Verdict)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.signedIn(r) {
			h.ServeHTTP(w, r)
			return
		}
		tok, ok := bearer(r)
		if !ok {
			refuse(w, r, throttle.Verdict{})
			return
		}
		if v := s.try(r, tok); v.OK {
			h.ServeHTTP(w, r)
		} else {
			refuse(w, r, v)
		}
	})
}

// apiRefused answers an API request without the token: 401, or 429 when
// its address must wait.
func apiRefused(w http.ResponseWriter, r *http.Request, v throttle.Verdict) {
	if v.Wait > 0 {
		apiThrottled(w, v)
		return
	}
	apiUnauthorized(w, r)
}

func apiUnauthorized(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ingest"`)
	apiError(w, http.StatusUnauthorized, "unauthorized", "", "send the access token (INGEST_UI_TOKEN) as Authorization: Bearer <token>")
}

func apiThrottled(w http.ResponseWriter, v throttle.Verdict) {
	throttle.SetRetryAfter(w, v.Wait)
	apiError(w, http.StatusTooManyRequests, "too_many_failures", "",
		fmt.Sprintf("too many wrong tokens were tried: no token is checked from this address for %d s (Retry-After)", throttle.Seconds(v.Wait)))
}

// pageRefused sends a browser without a session to the sign-in, or, when
// the token it sent must wait, shows the sign-in saying until when. A
// client that does not ask for HTML (a script) gets the API's answers
// instead: a redirect to a form is no use to it.
func (s *Server) pageRefused(w http.ResponseWriter, r *http.Request, v throttle.Verdict) {
	switch {
	case !wantsHTML(r):
		apiRefused(w, r, v)
	case v.Wait > 0:
		s.renderThrottled(w, r, loginView{Title: "Sign in", Next: localPath(r.URL.RequestURI())}, v)
	default:
		signIn(w, r)
	}
}

// wantsHTML reports whether the client's Accept names text/html (or
// application/xhtml+xml), as browsers' do; a script's */* or none does
// not.
func wantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		media, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		media = strings.ToLower(strings.TrimSpace(media))
		if media != "text/html" && media != "application/xhtml+xml" {
			continue
		}
		return !refused(params)
	}
	return false
}

// refused reports whether a media range's parameters say q=0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
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

// bearer is the token of an Authorization: Bearer header; the scheme's
// name is case-insensitive (RFC 9110, 11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// signedIn reports whether r carries a live session: a random 256-bit id,
// beyond guessing, so it is not throttled.
func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(signin.CookieName)
	if err != nil {
		return false
	}
	ok, err := s.sessions.Valid(r.Context(), c.Value)
	if err != nil {
		s.cfg.Logger.Warn("web: read a session: the request is asked for the token", "err", err)
	}
	return ok
}

// try compares tok, tried by r's client, with the access token under the
// throttle, and counts and logs a failure.
func (s *Server) try(r *http.Request, tok string) throttle.Verdict {
	v := s.throttle.Try(throttle.ClientKey(s.clientAddr(r)), func() bool { return s.same(tok) })
	switch {
	case v.OK:
		return v
	case v.Wait > 0:
		s.authFailed("throttled")
	default:
		s.authFailed("rejected")
	}
	for _, t := range []*throttle.Tally{v.Say, v.SayAll} {
		if t != nil {
			s.logTally(t)
		}
	}
	return v
}

func (s *Server) authFailed(outcome string) {
	if s.cfg.AuthFailed != nil {
		s.cfg.AuthFailed(outcome)
	}
}

// logTally says what was refused since the last line, never the token.
func (s *Server) logTally(t *throttle.Tally) {
	attrs := []any{"rejected", t.Rejected, "throttled", t.Throttled, "wait", t.Wait}
	if t.Key == "" {
		s.cfg.Logger.Warn("web: many wrong access tokens from many addresses: each address waits its own wait, the right token is checked from every other", attrs...)
		return
	}
	s.cfg.Logger.Warn("web: wrong access tokens tried", append([]any{"addr", t.Key}, attrs...)...)
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
	view := loginView{Title: "Sign in", Open: s.cfg.Token == "",
		Next: localPath(r.URL.Query().Get("next")), Out: r.URL.Query().Has("out")}
	if v := s.throttle.Peek(throttle.ClientKey(s.clientAddr(r))); v.Wait > 0 && !view.Open {
		s.renderThrottled(w, r, view, v)
		return
	}
	s.render(w, r, http.StatusOK, "login", view)
}

// renderThrottled is the sign-in answering 429: when to try again, and
// whose wait it is.
func (s *Server) renderThrottled(w http.ResponseWriter, r *http.Request, view loginView, v throttle.Verdict) {
	throttle.SetRetryAfter(w, v.Wait)
	view.Wait = waitText(v.Wait)
	view.Until = s.cfg.Clock.Now().Add(time.Duration(throttle.Seconds(v.Wait)) * time.Second).UTC().Format("15:04:05 UTC")
	s.render(w, r, http.StatusTooManyRequests, "login", view)
}

// waitText is a wait as a person reads it, rounded up: "45 seconds",
// "2 minutes", "1 hour".
func waitText(d time.Duration) string {
	n, unit := throttle.Seconds(d), "second"
	switch {
	case d > 90*time.Minute:
		n, unit = int64((d+time.Hour-1)/time.Hour), "hour"
	case d > 90*time.Second:
		n, unit = int64((d+time.Minute-1)/time.Minute), "minute"
	}
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", n, unit)
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
	view := loginView{Title: "Sign in", Next: localPath(r.PostFormValue("next"))}
	if s.cfg.Token == "" {
		s.render(w, r, http.StatusUnauthorized, "login", view)
		return
	}
	if v := s.try(r, r.PostFormValue("token")); v.Wait > 0 {
		s.renderThrottled(w, r, view, v)
		return
	} else if !v.OK {
		view.Wrong = true
		s.render(w, r, http.StatusUnauthorized, "login", view)
		return
	}
	id, err := s.sessions.Start(r.Context())
	if err != nil {
		s.cfg.Logger.Error("web: start a session", "err", err)
		s.pageError(w, r, http.StatusInternalServerError, "Could not start a session.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: signin.CookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r), MaxAge: int(s.sessions.TTL() / time.Second)})
	http.Redirect(w, r, view.Next, http.StatusSeeOther)
}

// logout ends the session and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if s.crossSite(w, r) {
		return
	}
	if c, err := r.Cookie(signin.CookieName); err == nil {
		if err := s.sessions.End(r.Context(), c.Value); err != nil {
			s.cfg.Logger.Error("web: end a session", "err", err)
			s.pageError(w, r, http.StatusInternalServerError, "Could not end the session: sign out again.")
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: signin.CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r), MaxAge: -1})
	http.Redirect(w, r, "/login?out=1", http.StatusSeeOther)
}

// overTLS reports whether the browser reached this server over TLS, as
// its connection or a trusted proxy in front (Config.TrustedProxies) says.
func (s *Server) overTLS(r *http.Request) bool {
	return edge.Proxies(s.cfg.TrustedProxies).OverTLS(r)
}

type loginView struct {
	Title string
	Open  bool // no token is asked
	Wrong bool
	Next  string
	Out   bool
	// Wait, when not empty, is how long until a token is checked again
	// from this address (Until, the time).
	Wait, Until string
}
