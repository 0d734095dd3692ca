package retention

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// notes are a database's notes in memory.
type notes map[string]string

func (n notes) Note(_ context.Context, name, value string) error { n[name] = value; return nil }

func (n notes) Noted(_ context.Context, name string) (string, error) { return n[name], nil }

// TestTheStandingsGateRefusesWhatNoPruneKept: a database holding data
// older than the standard standing allows, which no prune under a
// standing kept, is refused with exit 2 naming the prune and the
// standing; once a prune under it noted its keep, the same data is that
// prune's lag and passes; a database that holds nothing beyond is noted
// as kept, and a lowered standing below a prune's keep is refused again.
func TestTheStandingsGateRefusesWhatNoPruneKept(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		termsWorld(t, db)
		n := notes{}
		standard := ingest.StandardStanding()
		err := Gate(ctx, db, n, standard, termsCut())
		var ce *ingest.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "ingest prune --terms --dry-run") || !strings.Contains(err.Error(), "--standing extended") {
			t.Fatalf("got %v, want a configuration error naming the prune and the standing", err)
		}
		if len(n) != 0 {
			t.Errorf("a refused gate noted %v", n)
		}
		if err := NoteKept(ctx, n, standard.StatsFor); err != nil {
			t.Fatal(err)
		}
		if msg, err := OverStanding(ctx, db, n, standard, termsCut()); msg != "" || err != nil {
			t.Errorf("kept by a prune under the standing: %q, %v; want its lag let be", msg, err)
		}
		lowered := ingest.Standing{StatsFor: standard.StatsFor / 2}
		if msg, _ := OverStanding(ctx, db, n, lowered, termsCut()); msg == "" {
			t.Error("a standing lowered below the prune's keep: let be")
		}
	})
}

// TestTheStandingsGateNotesADatabaseWithinIt: a database holding nothing
// beyond the standing passes and is noted as kept under it, so that the
// scheduled prune's lag is never taken for an upgrade.
func TestTheStandingsGateNotesADatabaseWithinIt(t *testing.T) {
	db := storetest.Open(t)
	n := notes{}
	if err := Gate(context.Background(), db, n, ingest.StandardStanding(), termsCut()); err != nil {
		t.Fatal(err)
	}
	if n[keptNote] == "" {
		t.Errorf("notes %v, want %s", n, keptNote)
	}
}

// TestACopysGateRefusesASourceBeyondTheStanding: a source that holds data
// older than the standing allows is refused as the copy's configuration
// error, naming the prune and the standing, and nothing is noted on it; a
// source within the standing passes, noted no more.
func TestACopysGateRefusesASourceBeyondTheStanding(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := notes{}
		if err := CopyGate(ctx, db, n, ingest.StandardStanding(), termsCut()); err != nil || len(n) != 0 {
			t.Errorf("an empty source: %v, notes %v; want it passed, nothing noted", err, n)
		}
		termsWorld(t, db)
		err := CopyGate(ctx, db, n, ingest.StandardStanding(), termsCut())
		var ce *ingest.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "db copy: the database holds data older than") ||
			!strings.Contains(err.Error(), "ingest prune --terms --dry-run") || !strings.Contains(err.Error(), "--standing extended") {
			t.Errorf("got %v, want the copy's configuration error naming the prune and the standing", err)
		}
		if len(n) != 0 {
			t.Errorf("a copy's gate noted %v on its source", n)
		}
	})
}

// TestUnderStandingCutsSaysAndNotes: a snapshot pruned under the standing
// holds nothing beyond it, says what it cut, and is noted as kept under
// it; pruned again, it cuts nothing and says nothing.
func TestUnderStandingCutsSaysAndNotes(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	termsWorld(t, db)
	n := notes{}
	standard := ingest.StandardStanding()
	var said strings.Builder
	if err := UnderStanding(ctx, db, n, standard, termsCut(), &said); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said.String(), "not copied, beyond what the standard standing allows: 1 chart runs with 10 entries") {
		t.Errorf("said %q, want the run and entries cut", said.String())
	}
	if n[keptNote] == "" {
		t.Errorf("notes %v, want %s", n, keptNote)
	}
	if msg, err := OverStanding(ctx, db, n, standard, termsCut()); msg != "" || err != nil {
		t.Errorf("after the prune: %q, %v; want nothing beyond", msg, err)
	}
	said.Reset()
	if err := UnderStanding(ctx, db, n, standard, termsCut(), &said); err != nil || said.Len() != 0 {
		t.Errorf("pruned again: %v, said %q; want nothing cut", err, said.String())
	}
}
