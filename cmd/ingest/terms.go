package main

import (
	"context"
)

// checkTerms is check's line for the key's standing: what it lets the
// database keep and show (docs/terms.md).
func checkTerms(_ context.Context, c *checkEnv) (string, error) {
	return c.s.standing.String(), nil
}
