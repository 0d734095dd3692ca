package report

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ingestworks/ingest/clients"
)

// ListedToken is a token as tokens list shows it: usable says whether a
// serve reading the same plans file takes it (its plan is in the file).
type ListedToken struct {
	clients.Token
	Usable bool `json:"usable"`
}

// Tokens prints the API's tokens, a table or JSON; usable says whether a
// plan is in the plans file planFile.
func Tokens(out io.Writer, tokens []clients.Token, usable func(plan string) bool, planFile string, asJSON bool) error {
	list := make([]ListedToken, 0, len(tokens))
	for _, t := range tokens {
		list = append(list, ListedToken{t, usable(t.Plan)})
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPLAN\tUSABLE\tCREATED\tLAST USED")
	for _, t := range list {
		used := "never"
		if !t.LastUsed.IsZero() {
			used = t.LastUsed.Format(time.RFC3339)
		}
		usable := "yes"
		if !t.Usable {
			usable = "no: plan not in " + planFile
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Plan, usable, t.Created.Format(time.RFC3339), used)
	}
	return tw.Flush()
}
