package landing

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// book is a database's marks: the data's, and each cache's purged one.
type book struct {
	mark     string
	changed  time.Time
	purged   map[string]string
	readOnly bool
	changes  store.Changes
}

func (b *book) DataMark(context.Context) (string, time.Time, error) { return b.mark, b.changed, nil }

func (b *book) Purged(_ context.Context, cache string) (string, time.Time, bool, error) {
	m, ok := b.purged[cache]
	return m, b.changed, ok, nil
}

func (b *book) KeepPurged(_ context.Context, cache, _ string, _ bool, mark string, _ time.Time) (bool, error) {
	if b.readOnly {
		return false, errors.New("attempt to write a readonly database")
	}
	b.purged[cache] = mark
	return true, nil
}

func (b *book) ChangesSince(context.Context, time.Time) (store.Changes, error) { return b.changes, nil }

// m1 and m2 are data marks in DataMark's shape, the second a landing
// after the first (more runs, the oldest run and count the same: no prune).
const (
	m1 = "1 1 0 0 0 0 0 1"
	m2 = "2 1 0 0 0 0 0 1"
)

// told is what the caches and the site heard, in order.
type told struct {
	said []string
	fail bool
}

func (t *told) Caches() []string { return []string{"front"} }

func (t *told) Purge(_ context.Context, _ int, keys []string) error {
	t.said = append(t.said, "purge "+strings.Join(keys, " "))
	if t.fail {
		return errors.New("cache unreachable")
	}
	return nil
}

func (t *told) Know(mark string, _ time.Time) { t.said = append(t.said, "know "+mark) }

func (t *told) Keys(c store.Changes) []string {
	var keys []string
	for _, id := range c.Videos {
		keys = append(keys, edge.Video(id))
	}
	return keys
}

func (t *told) KeepUnchanged(from, mark string, _ time.Time, _ []string) {
	t.said = append(t.said, "keep "+from+"->"+mark)
}

func watchers(b *book, t *told) *Watchers {
	return &Watchers{marks: b, purger: t, site: t, timeout: time.Minute, log: slog.New(slog.DiscardHandler)}
}

// TestEachMoveIsPurgedOnceTheCacheTakesIt: a cache never purged is told
// the whole site; a move is told by the keys the site names for what
// changed, after the site knows the new mark; a mark already purged up
// to tells nothing; a purge the cache did not take is told again.
func TestEachMoveIsPurgedOnceTheCacheTakesIt(t *testing.T) {
	t.Parallel()
	b := &book{mark: m1, purged: map[string]string{}}
	heard := &told{}
	w := watchers(b, heard)
	ctx := context.Background()
	w.purgeMoved(ctx, 0, "front")
	w.purgeMoved(ctx, 0, "front")
	b.mark, b.changes = m2, store.Changes{Videos: []string{"a", "b"}}
	heard.fail = true
	w.purgeMoved(ctx, 0, "front")
	heard.fail = false
	w.purgeMoved(ctx, 0, "front")
	want := []string{
		"know " + m1, "keep ->" + m1, "purge " + edge.SiteKey,
		"know " + m2, "keep " + m1 + "->" + m2, "purge video:a video:b",
		"know " + m2, "keep " + m1 + "->" + m2, "purge video:a video:b",
	}
	if !slices.Equal(heard.said, want) {
		t.Errorf("heard\n%q\nwant\n%q", heard.said, want)
	}
	if b.purged["front"] != m2 {
		t.Errorf("the kept mark %q, want %q", b.purged["front"], m2)
	}
}

// TestADatabaseThatTakesNoWritesCostsNoPurgeAgain: when the purged mark
// cannot be kept in the database, the process keeps it, and the next
// read of the same mark tells the cache nothing.
func TestADatabaseThatTakesNoWritesCostsNoPurgeAgain(t *testing.T) {
	t.Parallel()
	b := &book{mark: m1, purged: map[string]string{}, readOnly: true}
	heard := &told{}
	w := watchers(b, heard)
	w.purgeMoved(context.Background(), 0, "front")
	w.purgeMoved(context.Background(), 0, "front")
	if n := len(slices.DeleteFunc(slices.Clone(heard.said), func(s string) bool { return !strings.HasPrefix(s, "purge") })); n != 1 {
		t.Errorf("purged %d times over a read-only database (%q), want once", n, heard.said)
	}
}

// TestStopEndsTheWatchers: Stop returns once every watcher has ended, the
// first purge told.
func TestStopEndsTheWatchers(t *testing.T) {
	t.Parallel()
	b := &book{mark: m1, purged: map[string]string{}}
	w := Start(b, &told{}, &told{}, time.Hour, time.Minute, slog.New(slog.DiscardHandler))
	w.Stop()
	w.Stop()
}
