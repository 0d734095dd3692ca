package ingest

// Caller is who asks the limiter for a call: the run and region a job's
// calls belong to, the zero Caller outside a run; or the proxy's client a
// call is forwarded for. The limiter is given it with each call it decides
// and writes it into the ledger with the call.
type Caller struct {
	Region string
	RunID  int64 // zero outside a run
	// Client names the proxy's client (its token's name); "" for the
	// daemon's own calls.
	Client string
}

// Call is the call d admitted for by, as the ledger of quotaKey keeps it:
// the one place a decision becomes a ledger's call.
func (d Decision) Call(quotaKey string, by Caller) Call {
	return Call{QuotaKey: quotaKey, ID: d.ID, At: d.At, Op: d.Op, Region: by.Region,
		RunID: by.RunID, Client: by.Client, Charges: d.Charges, Unmetered: d.Unmetered}
}
