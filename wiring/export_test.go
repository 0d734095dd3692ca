package wiring

// FollowLedger sets whether the servers built after it read their quota
// key's calls in write order (the default) or the window whole after each
// change (the baseline BenchmarkQuotaAPI compares with), and returns what
// puts it back.
func FollowLedger(on bool) (restore func()) {
	was := followLedger
	followLedger = on
	return func() { followLedger = was }
}
