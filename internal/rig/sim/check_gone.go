package sim

// What the refresh deletes as gone. docs/explanation/terms.md: a video the
// upstream no longer returns (deleted, made private) is deleted with every
// row pointing at it, and a tombstone says it went. The rule that the
// deletes ran (checkExercised) holds that one was found; this one, that
// nothing else was: a video the upstream still returns, deleted as gone,
// is data the readers lose and pages answering 410 for a video that is
// there.

import (
	"fmt"
	"sort"
	"time"
)

// checkGoneForgotten: every video the database holds a tombstone of at the
// end was one the upstream had forgotten when the tombstone was written.
func checkGoneForgotten(h *History) []string {
	forgot := map[string]time.Time{}
	for _, g := range h.Forgotten {
		forgot[g.ID] = g.At
	}
	var wrong []string
	for id, at := range h.Tombstones {
		if f, ok := forgot[id]; !ok || at.Before(f) {
			wrong = append(wrong, fmt.Sprintf("%s at %s", id, at.UTC().Format(time.RFC3339)))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	sort.Strings(wrong)
	return []string{fmt.Sprintf("%d videos were deleted as gone that the upstream still returned: %s", len(wrong), firstFew(wrong))}
}
