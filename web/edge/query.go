package edge

import (
	"slices"
	"strings"
)

// CanonicalQuery is raw (a URL's query, as sent) with only the parameters
// named in keep, sorted, each name once (its first value in that order): the query two asks for the
// same answer share. Names are compared as sent, not unescaped, as the
// cache compares them.
func CanonicalQuery(raw string, keep []string) string {
	var kept []string
	for _, part := range strings.Split(raw, "&") {
		if name, _, _ := strings.Cut(part, "="); part != "" && slices.Contains(keep, name) {
			kept = append(kept, part)
		}
	}
	// Sorted before a repeated name is dropped, so that the value kept is
	// the one the cache, which sorts and keeps both, sends first.
	slices.Sort(kept)
	out := kept[:0]
	seen := map[string]bool{}
	for _, part := range kept {
		if name, _, _ := strings.Cut(part, "="); !seen[name] {
			seen[name] = true
			out = append(out, part)
		}
	}
	return strings.Join(out, "&")
}
