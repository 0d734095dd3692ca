package store

import "fmt"

// The tracked counts (video_stats), the daily rollup (video_days) and the
// entries' second order (trending_entries_day) are each led by the UTC day
// (its 00:00, in ms), then the video: a prune that cuts whole days deletes
// whole pages of each. A read of one video seeks it in each day it asks
// for, the days named by a WITH clause that every such read shares:
// WithDays and DaysCTE.

// WithDays begins a statement with days (d): DaysCTE("days", from, to).
func WithDays(from, to string) string { return "WITH RECURSIVE " + DaysCTE("days", from, to) }

// DaysCTE is a recursive common table expression named name, of one column
// d: each UTC day's 00:00 (ms) from the day of from to before to, from and
// to being SQL expressions in ms (placeholders, most often), but only the
// days from the first to the last the daily rollup holds: the rollup has
// a row for every day an entry or a tracked count is kept, so the days
// outside its ends hold none. Both ends are read from the rollup's key,
// at its ends. It is materialized once for the statement, whatever reads
// it, and is written once for both databases. A statement that holds
// several begins "WITH RECURSIVE " and separates them with commas.
func DaysCTE(name, from, to string) string {
	return fmt.Sprintf(`%[1]s (d) AS MATERIALIZED (
  SELECT min(day_ms) FROM video_days
  WHERE day_ms >= CAST(%[2]s AS bigint) / 86400000 * 86400000 AND day_ms < CAST(%[3]s AS bigint)
  UNION ALL
  SELECT d + 86400000 FROM %[1]s
  WHERE d < (SELECT max(day_ms) FROM video_days WHERE day_ms < CAST(%[3]s AS bigint)))
`, name, from, to)
}

// EntryDay is the UTC day of entry e's fetch, as trending_entries_day's
// first column says it: a statement must write it so for the index to
// serve it.
const EntryDay = "e.fetched_ms / 86400000 * 86400000"

// AllDays is a to that no day reaches: DaysCTE over every kept day.
const AllDays = "4611686018427387904"
