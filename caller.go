package ingest

import "context"

// Caller is who asks the limiter for a call: the run and region a job's
// calls belong to, and for a block the operation that met the exhausted
// quota. The limiter writes it into the ledger with each call and block.
type Caller struct {
	Region string
	RunID  int64 // zero outside a run
	Op     string
}

type callerKey struct{}

// WithCaller returns ctx carrying c, for the limiter's ledger.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the Caller ctx carries; the zero Caller when none.
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
