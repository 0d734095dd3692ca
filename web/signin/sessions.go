package signin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// CookieName holds the session id a sign-in sets: a random id the server
// keeps, never the access token itself.
const CookieName = "ingest_session"

// DefaultTTL is how long a sign-in lasts when web's Config.SessionTTL is
// zero.
const DefaultTTL = 12 * time.Hour

// MaxSessions bounds the sessions kept: signing in is behind the token,
// so only its holders can fill the table, but a loop must not grow it
// without end.
const MaxSessions = 10000

// Store is where the sign-ins are kept (web's Config.Sessions): the
// database's (clients.Sessions), which every replica on it reads.
type Store interface {
	Start(ctx context.Context, id string, now, expires time.Time) error
	Live(ctx context.Context, id string, now time.Time) (bool, error)
	End(ctx context.Context, id string) error
}

// Sessions are the signed-in browsers, each by a random id the cookie
// holds, kept in the database so that a sign-in holds on every replica
// and a sign-out on one ends it on all.
type Sessions struct {
	ttl   time.Duration
	clock ingest.Clock
	kept  Store
}

// NewSessions keeps sign-ins in kept for ttl (DefaultTTL when zero), or,
// without a store, in this process alone.
func NewSessions(ttl time.Duration, clock ingest.Clock, kept Store) *Sessions {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if kept == nil {
		kept = &memSessions{}
	}
	return &Sessions{ttl: ttl, clock: clock, kept: kept}
}

// Start makes a new session and returns its id.
func (s *Sessions) Start(ctx context.Context) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.clock.Now()
	return id, s.kept.Start(ctx, id, now, now.Add(s.ttl))
}

// Valid reports whether id is a live session.
func (s *Sessions) Valid(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	return s.kept.Live(ctx, id, s.clock.Now())
}

// TTL is how long a sign-in lasts: the cookie's Max-Age.
func (s *Sessions) TTL() time.Duration { return s.ttl }

// End ends the session id.
func (s *Sessions) End(ctx context.Context, id string) error { return s.kept.End(ctx, id) }

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
