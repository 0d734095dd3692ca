package fetch

import (
	"google.golang.org/api/googleapi"

	"github.com/ingestworks/ingest"
)

// videoParts are the parts of a video every call asks for.
var videoParts = ingest.VideoParts()

// fields is each operation's fields=: only what the worker reads of an
// answer travels, the upstream charging the same units whatever is asked
// (docs/explanation/quota.md).
var fields = func() map[string]googleapi.Field {
	m := map[string]googleapi.Field{}
	for _, o := range ingest.Operations {
		m[o.Name] = googleapi.Field(ingest.Fields(ingest.Keeps(o.Name)))
	}
	return m
}()
