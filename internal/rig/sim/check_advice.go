package sim

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ingestworks/ingest"
)

// checkClockAdvice: a decision refused on the clock tells the operator
// what the upstream's time it was compared with rests on, its Date header
// asked again or recorded, and so which clock to set or which reading to
// forget (docs/operations/faults.md, the line an operator reads). One that only
// says to set "that clock" right leaves an operator whose upstream's Date
// was the wrong one (a proxy's cached Date) to set a right clock wrong.
func checkClockAdvice(h *History) []string {
	var bare []string
	n := 0
	err := eachLogLine([]string{h.Log, filepath.Join(h.Dir, "beside.log")}, func(file, line string) {
		_, refusal, ok := strings.Cut(line, ingest.ErrClockSkew.Error())
		if !ok {
			return
		}
		n++
		if !strings.Contains(refusal, "Date header") {
			bare = append(bare, fmt.Sprintf("%s: %s", file, cut(line)))
		}
	})
	if err != nil {
		return []string{err.Error()}
	}
	if len(bare) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d refusals on the clock do not say what the upstream's time rests on: %s", len(bare), n, firstFew(bare))}
}
