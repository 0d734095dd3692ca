package sim

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ingestworks/ingest"
)

// pagesPastFailure is how many pages a failed pass may have been answered
// past those it stored: the page whose store failed, and the next, on the
// wire while it was being stored (jobs.Pass stores a page while the next
// is fetched).
const pagesPastFailure = 2

// checkStoppedAtFailure: a chart pass that failed stopped there: the
// upstream answered the daemon no more of its pages than it stored and
// pagesPastFailure (docs/operations/faults.md: a full disk met at a
// write stops the run, nothing more spent; a store that failed stops
// the pass). A pass that goes on asking for pages it cannot keep spends
// the pool for nothing. Pages are told apart by their token, so that a
// pass restarted from its first page counts each once.
func checkStoppedAtFailure(h *History) []string {
	var wrong []string
	failed := 0
	for i, r := range h.Runs {
		if r.Status != ingest.StatusFailed || h.beside(r) {
			continue
		}
		failed++
		end := h.End
		if !r.Finished.IsZero() {
			end = r.Finished
		}
		for _, next := range h.Runs[i+1:] { // a run left running ends where its chart's next starts
			if next.Region == r.Region && next.Category == r.Category && next.Started.Before(end) {
				end = next.Started
				break
			}
		}
		pages := map[string]bool{}
		for _, c := range h.Calls {
			if c.Kind == KindChart && c.Worker == WorkerDaemon && c.Status == http.StatusOK && !c.Cut &&
				c.Region == r.Region && c.Category == r.Category && !c.At.Before(r.Started) && c.At.Before(end) {
				pages[c.Page] = true
			}
		}
		if len(pages) > r.Pages+pagesPastFailure {
			wrong = append(wrong, fmt.Sprintf("%s's run %d at %s stored %d pages, and was answered %d", chartName(r.Region, r.Category), r.ID,
				r.Started.UTC().Format(time.RFC3339), r.Pages, len(pages)))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d failed chart passes went on asking for pages past their failure (more than %d past those stored): %s",
		len(wrong), failed, pagesPastFailure, firstFew(wrong))}
}
