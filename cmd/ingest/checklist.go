package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
)

// checkLine is one line of `ingest check`: its name, and what runs it.
type checkLine struct {
	Name string
	Run  func(context.Context) (detail string, err error)
}

// List is every check in the order they run, the command's own two
// (settings, terms) first: later checks rely on what earlier ones found
// (the limiter needs the database).
func (c *checks) List(settings, terms func(context.Context) (string, error)) []checkLine {
	return []checkLine{{"settings", settings}, {"terms", terms}, {"costs", c.Costs}, {"database", c.Database},
		{"limiter", c.Limiter}, {"clock", c.Clock}, {"agreement", c.Agreement}, {"key", c.Key}}
}

// Run runs the checks, printing a line each (ok, skip or FAIL; the name;
// what was found or went wrong), and returns the errors of those that
// failed, by name, in order.
func (c *checks) Run(ctx context.Context, out io.Writer, list []checkLine) (failed []string, errs []error) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, ch := range list {
		detail, err := ch.Run(ctx)
		status := "ok"
		switch {
		case errors.Is(err, errSkipped):
			status = "skip"
		case err != nil:
			status, detail = "FAIL", err.Error()
			c.Failed[ch.Name] = true
			failed, errs = append(failed, ch.Name), append(errs, err)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", status, ch.Name, detail)
	}
	w.Flush()
	return failed, errs
}
