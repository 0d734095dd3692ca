package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// ErrNoIntent: `ingest quota apply` on a quota key whose Redis holds no
// configuration, without saying that the key is new. A key with no
// configuration is either one nobody created or one whose Redis lost its
// data, and only the operator can tell which: creating a lost key anew
// would erase the loss, and the calls it forgot would be spent again.
var ErrNoIntent = errors.New("the limiter holds no configuration for this quota key")

// PastError says that a quota key apply was asked to create had a life
// before: the limiter still holds some of it, or a ledger holds calls of
// it within the pools' span. Its Redis lost data, which a refill puts back
// (`ingest quota restore`) or the wait outlasts; a new configuration would
// erase the loss.
type PastError struct {
	QuotaKey string
	Signs    []string      // what shows it, one line each
	Span     time.Duration // the pools' span: how far back a host's calls count
}

func (e *PastError) Error() string {
	return fmt.Sprintf("quota key %s holds no configuration in the limiter, but it was used: %s. "+
		"Its Redis lost data, and creating the key anew would let the calls it forgot be spent again: "+
		"run `ingest quota restore --ledger DB...` with the database of every host that spent in the last %s, "+
		"or let the workers wait (the first run of a host that spent finds the loss, and the limiter waits for the others)",
		e.QuotaKey, strings.Join(e.Signs, "; "), e.Span)
}

// Create is `ingest quota apply`: on a quota key that holds a
// configuration it replaces it (ApplyConfig); on one that holds none it
// asks for intent, isNew, and refuses with a *PastError when anything
// shows the key was used: what the limiter still holds of it, or a call
// within the pools' span in this ledger or in others (the ledgers of other
// hosts the operator has at hand, by name).
func (r *Redis) Create(ctx context.Context, isNew bool, others map[string]ingest.Recalled) ([]ConfigChange, error) {
	cur, err := r.Config(ctx)
	if err != nil {
		return nil, err
	}
	if held(cur) {
		return r.ApplyConfig(ctx)
	}
	signs, err := r.past(ctx, others)
	switch {
	case err != nil:
		return nil, err
	case len(signs) > 0:
		return nil, &PastError{QuotaKey: r.opts.QuotaKey, Signs: signs, Span: r.opts.Costs.Span()}
	case !isNew:
		return nil, fmt.Errorf("%w %s, and nothing shows it was used: %s", ErrNoIntent, r.opts.QuotaKey, intent(r.opts.Costs.Span()))
	}
	return r.ApplyConfig(ctx)
}

// intent says what an operator does with a key that holds no
// configuration, whose calls count over span.
func intent(span time.Duration) string {
	return "if the key was never used, run `ingest quota apply --new`; " +
		"if Redis lost its data, run `ingest quota restore --ledger DB...` with the database of every host that spent in the last " + span.String() +
		", or wait: the first run of a host that spent finds the loss, and the limiter waits for the others"
}

// past lists what shows that the quota key was used: the limiter's
// leftovers of it (ledgers it lists, units in a window, a recovery), and
// the calls within the span of this ledger and of others.
func (r *Redis) past(ctx context.Context, others map[string]ingest.Recalled) ([]string, error) {
	st, err := r.Status(ctx)
	if err != nil {
		return nil, err
	}
	var signs []string
	for _, l := range st.Ledgers {
		signs = append(signs, fmt.Sprintf("the limiter lists ledger %s (%s), last call %s", l.Ledger, l.Where, l.Mark))
	}
	for _, p := range st.Pools {
		if p.Used > 0 || p.UsedDay > 0 {
			signs = append(signs, fmt.Sprintf("pool %s holds %d units in its window", p.Pool, max(p.Used, p.UsedDay)))
		}
	}
	if st.Recovering {
		signs = append(signs, "a recovery is under way")
	}
	own, err := r.led.recall(ctx)
	if err != nil {
		return nil, err
	}
	since := r.opts.Now().Add(-r.opts.Costs.Span())
	if s := callsSince("this database's ledger", own, since); s != "" {
		signs = append(signs, s)
	}
	for _, name := range slices.Sorted(maps.Keys(others)) {
		if s := callsSince("ledger "+name, others[name], since); s != "" {
			signs = append(signs, s)
		}
	}
	return signs, nil
}

// callsSince says how many calls rec holds after since, "" for none.
func callsSince(what string, rec ingest.Recalled, since time.Time) string {
	n, newest := 0, time.Time{}
	for _, c := range rec.Calls {
		if c.At.After(since) {
			n++
			if c.At.After(newest) {
				newest = c.At
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds %d calls since %s, the newest at %s", what, n,
		since.UTC().Format(time.RFC3339), newest.UTC().Format(time.RFC3339))
}

// adopt writes this costs file's configuration when the limiter holds
// none: after an operator restored a key that lost everything, so that
// its workers go on rather than wait for an apply.
func (r *Redis) adopt(ctx context.Context) error {
	cur, err := r.Config(ctx)
	if err != nil || held(cur) {
		return err
	}
	_, err = r.ApplyConfig(ctx)
	return err
}
