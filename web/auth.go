package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ingestworks/ingest"
)

// MinTokenLen is the fewest characters an access token may have.
const MinTokenLen = 20

// MinTokenBits is the least entropy an access token may have, as
// TokenBits estimates it: the throttle slows each guessing address, not
// a guess spread over many, so the token alone must put guessing out of
// reach at any rate a server can answer.
const MinTokenBits = 128

// CheckToken says why token is too weak to guard the data: shorter than
// MinTokenLen, under MinTokenBits, or with spaces around it (a bearer
// header cannot carry them). It never quotes the token.
func CheckToken(token string) error {
	if strings.TrimSpace(token) != token {
		return fmt.Errorf("it begins or ends with white space, which an Authorization header cannot carry")
	}
	if strings.ContainsFunc(token, unicode.IsControl) {
		return fmt.Errorf("it holds a control character")
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLen {
		return fmt.Errorf("it has %d characters, want at least %d", n, MinTokenLen)
	}
	if bits := TokenBits(token); bits < MinTokenBits {
		return fmt.Errorf("it has about %d bits of entropy, want at least %d (repeats, runs like 1234 and one kind of character count for little)", bits, MinTokenBits)
	}
	return nil
}

// TokenBits estimates the entropy of token: each character that neither
// repeats what came before (three or more in a row already seen) nor
// continues a run (abc, 4321) counts the bits of a pick among the kinds
// of character the token uses (26 lower-case letters, 26 upper-case, 10
// digits, 33 symbols). A random token of n characters counts about what
// it has; a word said twice, a repeated letter or a run counts little.
func TokenBits(token string) int {
	rs := []rune(token)
	kinds, fresh := map[string]bool{}, 0
	for i := 0; i < len(rs); i++ {
		kinds[charKind(rs[i])] = true
		if n := repeatAt(rs, i); n >= 3 {
			for _, r := range rs[i : i+n] {
				kinds[charKind(r)] = true
			}
			i += n - 1
			continue
		}
		if i >= 2 && rs[i]-rs[i-1] == rs[i-1]-rs[i-2] && abs(rs[i]-rs[i-1]) <= 1 {
			continue // a run: aaa, abc, 321
		}
		fresh++
	}
	alphabet := 0
	for k := range kinds {
		alphabet += kindSize[k]
	}
	return int(float64(fresh) * math.Log2(float64(alphabet)))
}

// repeatAt is the length of the longest stretch at rs[i:] that begins
// earlier too (overlapping allowed, as in aaaa).
func repeatAt(rs []rune, i int) int {
	best := 0
	for j := 0; j < i; j++ {
		n := 0
		for i+n < len(rs) && rs[j+n] == rs[i+n] {
			n++
		}
		best = max(best, n)
	}
	return best
}

func abs(r rune) rune {
	if r < 0 {
		return -r
	}
	return r
}

var kindSize = map[string]int{"lower-case letters": 26, "upper-case letters": 26, "digits": 10, "symbols": 33}

func charKind(r rune) string {
	switch {
	case unicode.IsLower(r):
		return "lower-case letters"
	case unicode.IsUpper(r):
		return "upper-case letters"
	case unicode.IsDigit(r):
		return "digits"
	}
	return "symbols"
}

// NewToken returns a random access token of 256 bits that CheckToken
// takes.
func NewToken() string {
	for {
		var b [32]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		if tok := base64.RawURLEncoding.EncodeToString(b[:]); CheckToken(tok) == nil {
			return tok
		}
	}
}

// CookieName holds the session id a sign-in sets: a random id the server
// keeps, never the access token itself.
const CookieName = "ingest_session"

// DefaultSessionTTL is how long a sign-in lasts when Config.SessionTTL is
// zero.
const DefaultSessionTTL = 12 * time.Hour

// MaxSessions bounds the sessions kept: signing in is behind the token,
// so only its holders can fill the table, but a loop must not grow it
// without end.
const MaxSessions = 10000

// SessionStore is where the sign-ins are kept (Config.Sessions): the
// database's (clients.Sessions), which every replica on it reads.
type SessionStore interface {
	Start(ctx context.Context, id string, now, expires time.Time) error
	Live(ctx context.Context, id string, now time.Time) (bool, error)
	End(ctx context.Context, id string) error
}

// sessions are the signed-in browsers, each by a random id the cookie
// holds, kept in the database so that a sign-in holds on every replica
// and a sign-out on one ends it on all.
type sessions struct {
	ttl   time.Duration
	clock ingest.Clock
	kept  SessionStore
}

func newSessions(ttl time.Duration, clock ingest.Clock, kept SessionStore) *sessions {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	if kept == nil {
		kept = &memSessions{}
	}
	return &sessions{ttl: ttl, clock: clock, kept: kept}
}

// start makes a new session and returns its id.
func (s *sessions) start(ctx context.Context) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.clock.Now()
	return id, s.kept.Start(ctx, id, now, now.Add(s.ttl))
}

// valid reports whether id is a live session.
func (s *sessions) valid(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	return s.kept.Live(ctx, id, s.clock.Now())
}

func (s *sessions) end(ctx context.Context, id string) error { return s.kept.End(ctx, id) }

// memSessions are a process's own sessions, for a server without a
// database: id -> expiry (a restart signs everyone out, the safe side).
type memSessions struct {
	mu  sync.Mutex
	ids map[string]time.Time
}

func (m *memSessions) Start(_ context.Context, id string, now, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[string]time.Time{}
	}
	if len(m.ids) >= MaxSessions {
		for k, exp := range m.ids {
			if !now.Before(exp) {
				delete(m.ids, k)
			}
		}
		for k := range m.ids { // still full: drop any one
			if len(m.ids) < MaxSessions {
				break
			}
			delete(m.ids, k)
		}
	}
	m.ids[id] = expires
	return nil
}

func (m *memSessions) Live(_ context.Context, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.ids[id]
	if ok && !now.Before(exp) {
		delete(m.ids, id)
		return false, nil
	}
	return ok, nil
}

func (m *memSessions) End(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.ids, id)
	return nil
}

// authorized asks for a live session cookie (browsers that signed in) or
// for the access token as a bearer header (scripts), tried under the
// throttle; refuse answers a request without either, v.wait > 0 when the
// token was not compared because its address (or every address) must
// wait.
func (s *Server) authorized(h http.Handler, refuse func(w http.ResponseWriter, r *http.Request, v verdict)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.signedIn(r) {
			h.ServeHTTP(w, r)
			return
		}
		tok, ok := bearer(r)
		if !ok {
			refuse(w, r, verdict{})
			return
		}
		if v := s.try(r, tok); v.ok {
			h.ServeHTTP(w, r)
		} else {
			refuse(w, r, v)
		}
	})
}

// apiRefused answers an API request without the token: 401, or 429 when
// its address must wait.
func apiRefused(w http.ResponseWriter, r *http.Request, v verdict) {
	if v.wait > 0 {
		apiThrottled(w, v)
		return
	}
	apiUnauthorized(w, r)
}

func apiUnauthorized(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ingest"`)
	apiError(w, http.StatusUnauthorized, "unauthorized", "", "send the access token (INGEST_UI_TOKEN) as Authorization: Bearer <token>")
}

func apiThrottled(w http.ResponseWriter, v verdict) {
	setRetryAfter(w, v.wait)
	apiError(w, http.StatusTooManyRequests, "too_many_failures", "",
		fmt.Sprintf("too many wrong tokens were tried: no token is checked from this address for %d s (Retry-After)", ceilSeconds(v.wait)))
}

// pageRefused sends a browser without a session to the sign-in, or, when
// the token it sent must wait, shows the sign-in saying until when. A
// client that does not ask for HTML (a script) gets the API's answers
// instead: a redirect to a form is no use to it.
func (s *Server) pageRefused(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case !wantsHTML(r):
		apiRefused(w, r, v)
	case v.wait > 0:
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
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	ok, err := s.sessions.valid(r.Context(), c.Value)
	if err != nil {
		s.cfg.Logger.Warn("web: read a session: the request is asked for the token", "err", err)
	}
	return ok
}

// try compares tok, tried by r's client, with the access token under the
// throttle, and counts and logs a failure.
func (s *Server) try(r *http.Request, tok string) verdict {
	v := s.throttle.try(clientKey(s.clientAddr(r)), func() bool { return s.same(tok) })
	switch {
	case v.ok:
		return v
	case v.wait > 0:
		s.authFailed("throttled")
	default:
		s.authFailed("rejected")
	}
	for _, t := range []*tally{v.say, v.sayAll} {
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
func (s *Server) logTally(t *tally) {
	attrs := []any{"rejected", t.rejected, "throttled", t.throttled, "wait", t.wait}
	if t.key == "" {
		s.cfg.Logger.Warn("web: many wrong access tokens from many addresses: each address waits its own wait, the right token is checked from every other", attrs...)
		return
	}
	s.cfg.Logger.Warn("web: wrong access tokens tried", append([]any{"addr", t.key}, attrs...)...)
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
	if v := s.throttle.peek(clientKey(s.clientAddr(r))); v.wait > 0 && !view.Open {
		s.renderThrottled(w, r, view, v)
		return
	}
	s.render(w, r, http.StatusOK, "login", view)
}

// renderThrottled is the sign-in answering 429: when to try again, and
// whose wait it is.
func (s *Server) renderThrottled(w http.ResponseWriter, r *http.Request, view loginView, v verdict) {
	setRetryAfter(w, v.wait)
	view.Wait = waitText(v.wait)
	view.Until = s.cfg.Clock.Now().Add(time.Duration(ceilSeconds(v.wait)) * time.Second).UTC().Format("15:04:05 UTC")
	s.render(w, r, http.StatusTooManyRequests, "login", view)
}

// waitText is a wait as a person reads it, rounded up: "45 seconds",
// "2 minutes", "1 hour".
func waitText(d time.Duration) string {
	n, unit := ceilSeconds(d), "second"
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
	if v := s.try(r, r.PostFormValue("token")); v.wait > 0 {
		s.renderThrottled(w, r, view, v)
		return
	} else if !v.ok {
		view.Wrong = true
		s.render(w, r, http.StatusUnauthorized, "login", view)
		return
	}
	id, err := s.sessions.start(r.Context())
	if err != nil {
		s.cfg.Logger.Error("web: start a session", "err", err)
		s.pageError(w, r, http.StatusInternalServerError, "Could not start a session.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r), MaxAge: int(s.sessions.ttl / time.Second)})
	http.Redirect(w, r, view.Next, http.StatusSeeOther)
}

// logout ends the session and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if s.crossSite(w, r) {
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		if err := s.sessions.end(r.Context(), c.Value); err != nil {
			s.cfg.Logger.Error("web: end a session", "err", err)
			s.pageError(w, r, http.StatusInternalServerError, "Could not end the session: sign out again.")
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r), MaxAge: -1})
	http.Redirect(w, r, "/login?out=1", http.StatusSeeOther)
}

// overTLS reports whether the browser reached this server over TLS: its
// own connection, or a trusted proxy's (Config.TrustedProxies) saying so
// in X-Forwarded-Proto; another peer's header is not believed.
func (s *Server) overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(peer) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
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
