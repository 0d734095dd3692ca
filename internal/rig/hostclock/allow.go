package hostclock

// Allowed are the places, a room or a room's file, that read the host's
// clock or wait on the runtime's timers although they are not package
// clock nor a test rig, each with why the host's time is the one that
// matters there. Keep it short: an entry that lets nothing be fails
// TestAllowlistIsNeeded.
var Allowed = map[string]string{
	"root/wait.go": "the house's waits: the runtime's timers, which a testing/synctest bubble makes virtual, " +
		"kept in the root so that the adapters, which import only the root, wait through them too",
	"internal/rig/fakeyt": "the fake upstream: its clock is the upstream's, which a test sets apart from the house's, " +
		"and the latency it is told to add is a real wait",
	"cmd/fakeyt": "the fake upstream's binary: its clock is the upstream's, moved by --date-offset, " +
		"the other side of a rehearsal of the house clock",
	"internal/rig/yeardb": "builds a bench database: the year it ends at, by default, is the host's last hour",
	"cmd/yeardb":          "builds a bench database and says how long it took, on the host",
	"internal/rig/sim": "the simulation's own rig: it runs inside a testing/synctest bubble, where the runtime's time " +
		"is the virtual clock the whole daemon runs on, and its restarts and the fake's charges are stamped by it",
	"ratelimit": "the API throttle counts a client's requests on the process's monotonic clock (PostgreSQL's " +
		"on the server's), which no step of the house clock may move: a rehearsal's step would free or hold every client at once",
	"ledger/hostclock.go": "the clock a SQLite file's leases expire by: every process sharing the file reads the host's, " +
		"which a rehearsal's offset in one process must not move",
	"store/migrate.go": "how long a schema step took (SQLite's or PostgreSQL's), as the upgrade's log line says it: a span on the host's " +
		"monotonic clock, which the house clock's rehearsed offset must not lengthen or shorten",
	"store/daemon_unix.go": "the note beside the daemon's lock says when the process started as the host's " +
		"ps and logs show it",
}
