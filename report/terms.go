package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/retention"
)

// Terms is the key's standing, what it implies, and how far back the
// database's data reaches (docs/explanation/terms.md).
type Terms struct {
	ingest.Standing
	Held *retention.Held // nil: not read (no database)
}

// TermsJSON is the report's "terms" object.
type TermsJSON struct {
	Standing    string      `json:"standing"` // standard or extended
	StatsDays   float64     `json:"stats_retention_days"`
	DataDays    float64     `json:"data_retention_days"`
	RefreshDays float64     `json:"refresh_after_days"`
	Derived     bool        `json:"derived"`
	Oldest      *OldestJSON `json:"oldest"` // null: no database
	Beyond      bool        `json:"beyond"` // the database holds data older than the standing allows
	StatsCutoff string      `json:"stats_cutoff"`
	DataCutoff  string      `json:"data_cutoff"`
}

// OldestJSON is when the oldest of each kind of the upstream's data was
// fetched; null for none.
type OldestJSON struct {
	Statistic    *string `json:"statistic"`
	Video        *string `json:"video"`
	SearchResult *string `json:"search_result"`
	Category     *string `json:"category"`
}

func days(d time.Duration) float64 { return d.Hours() / 24 }

// terms reads how far back the data reaches.
func (r *Report) terms(ctx context.Context, src Sources) error {
	r.Terms = &Terms{Standing: src.Standing}
	if r.Terms.StatsFor == 0 {
		r.Terms.Standing = ingest.StandardStanding()
	}
	if src.Held == nil {
		return nil
	}
	h, err := src.Held(ctx)
	if err != nil {
		return err
	}
	r.Terms.Held = &h
	return nil
}

// cutoffs are the oldest a statistic and any other data may be, now.
func (t *Terms) cutoffs(now time.Time) (stats, data time.Time) {
	return now.Add(-t.StatsFor), now.Add(-t.DataKeep())
}

// Beyond says whether the database holds a statistic, a backfill result
// or a category name older than the standing allows. A video's text is
// not judged here: a video kept rows show is fetched again before it is
// too old, and the prune deletes the others.
func (t *Terms) Beyond(now time.Time) bool {
	if t.Held == nil {
		return false
	}
	stats, data := t.cutoffs(now)
	before := func(at, cut time.Time) bool { return !at.IsZero() && at.Before(cut) }
	return before(t.Held.Stat, stats) || before(t.Held.Search, data) || before(t.Held.Category, data)
}

func (r *Report) termsJSON() *TermsJSON {
	t := r.Terms
	if t == nil {
		return nil
	}
	j := &TermsJSON{Standing: t.Name(), StatsDays: days(t.StatsFor), DataDays: days(t.DataKeep()),
		RefreshDays: days(ingest.RefreshAfter), Derived: t.Derived, Beyond: t.Beyond(r.Now)}
	if h := t.Held; h != nil {
		j.Oldest = &OldestJSON{Statistic: Stamp(h.Stat), Video: Stamp(h.Video), SearchResult: Stamp(h.Search),
			Category: Stamp(h.Category)}
	}
	return j
}

func (r *Report) textTerms(out io.Writer) {
	t := r.Terms
	if t == nil {
		return
	}
	fmt.Fprintf(out, "Terms: %s\n", t.Standing)
	if t.Held == nil {
		return
	}
	oldest := func(at time.Time) string {
		if at.IsZero() {
			return "none"
		}
		return at.UTC().Format("2006-01-02")
	}
	fmt.Fprintf(out, "Oldest held: statistic %s, video text %s, backfill result %s, category name %s\n",
		oldest(t.Held.Stat), oldest(t.Held.Video), oldest(t.Held.Search), oldest(t.Held.Category))
	if t.Beyond(r.Now) {
		fmt.Fprintf(out, "The database holds data older than the %s standing allows: see `ingest prune --terms --dry-run` (docs/explanation/terms.md)\n", t.Name())
	}
}
