package clients

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestASessionHoldsOnEveryReplicaAndEndsOnAll: a session started through
// one handle on the database is live through another (another replica),
// until it expires or either ends it; the database keeps no id, only its
// hash; and a loop of sign-ins keeps at most the cap, the newest live.
func TestASessionHoldsOnEveryReplicaAndEndsOnAll(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
		one, other := NewSessions(db.DB, 3), NewSessions(db.DB, 3)
		live := func(s *Sessions, id string, at time.Time) bool {
			t.Helper()
			ok, err := s.Live(ctx, id, at)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if err := one.Start(ctx, "session-a", t0, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if !live(other, "session-a", t0.Add(time.Minute)) {
			t.Errorf("a session started on one replica is not live on the other")
		}
		if live(other, "session-a", t0.Add(time.Hour)) {
			t.Errorf("a session is live at its expiry")
		}
		if live(other, "session-b", t0) {
			t.Errorf("a session never started is live")
		}
		var clear int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE hash = ?`, "session-a").Scan(&clear); err != nil || clear != 0 {
			t.Errorf("the session id kept in clear: %d rows (%v)", clear, err)
		}
		if err := other.End(ctx, "session-a"); err != nil {
			t.Fatal(err)
		}
		if live(one, "session-a", t0.Add(time.Minute)) {
			t.Errorf("a session ended on one replica is live on the other")
		}
		for i := range 5 {
			if err := one.Start(ctx, fmt.Sprint("loop-", i), t0, t0.Add(time.Duration(i+1)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 3 {
			t.Errorf("after 5 sign-ins under a cap of 3: %d sessions kept (%v), want 3", n, err)
		}
		if !live(other, "loop-4", t0) || live(other, "loop-0", t0) {
			t.Errorf("the cap ended the newest session, or kept the oldest")
		}
	})
}
