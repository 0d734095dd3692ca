package ingest

import (
	"fmt"
	"time"
)

// DataFor is the longest anything fetched with an API key may stay stored
// without being fetched again: 30 calendar days (docs/explanation/terms.md, III.E.4.d;
// for statistics, III.E.4.b).
const DataFor = 30 * 24 * time.Hour

// RefreshAfter is the age at which a video's metadata is fetched again by
// id: early enough that a refresh dropped for a day or two under scarcity
// is made up before DataFor (docs/explanation/terms.md).
const RefreshAfter = 21 * 24 * time.Hour

// The two standings a key can have under the upstream's terms.
const (
	StandingStandard = "standard"
	StandingExtended = "extended"
)

// Standing is the key's standing under the upstream's terms, as the
// operator states it (docs/explanation/terms.md): standard, the default, under which
// nothing fetched stays longer than DataFor; or extended, an audited key
// accepted under the derived-metrics policy, with what the acceptance
// grants.
type Standing struct {
	Extended bool
	// StatsFor is how long statistics (chart entries with their counts,
	// tracked counts, their daily rollup) may be kept: DataFor under
	// standard, what the acceptance grants under extended.
	StatsFor time.Duration
	// Derived says that figures ingest computes (movement, peak rank, days
	// on chart, trends) may be shown, labelled as computed.
	Derived bool
}

// StandardStanding is the default standing.
func StandardStanding() Standing { return Standing{StatsFor: DataFor} }

// Name is "standard" or "extended".
func (s Standing) Name() string {
	if s.Extended {
		return StandingExtended
	}
	return StandingStandard
}

// DataKeep is how long what is not a statistic may be kept: video text,
// category names, search results. DataFor under either standing: the
// derived-metrics policy extends statistics only.
func (s Standing) DataKeep() time.Duration { return DataFor }

// Check says whether keep, a retention asked for statistics, is within
// what the standing allows.
func (s Standing) Check(keep time.Duration) error {
	if keep > s.StatsFor {
		return fmt.Errorf("%s is more than the %s standing allows (%s)", Days(keep), s.Name(), Days(s.StatsFor))
	}
	return nil
}

// String says the standing and what it implies, in one line.
func (s Standing) String() string {
	derived := "off"
	if s.Derived {
		derived = "on, labelled as computed"
	}
	return fmt.Sprintf("%s: statistics kept %s, other data %s (refreshed by id after %s); derived figures %s",
		s.Name(), Days(s.StatsFor), Days(s.DataKeep()), Days(RefreshAfter), derived)
}

// Days writes d as whole days (30d) when it is one, else as a duration.
func Days(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
