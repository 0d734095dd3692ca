package pace

import (
	"time"

	"github.com/ingestworks/ingest"
)

// edge is how far the limiter's clock (Redis's, or a host's) may be from
// this worker's while a spend of its own is at the window's start: a
// spend the limiter still counts for that long after this worker's window
// let it go is still this worker's.
const edge = time.Minute

// share records how many workers spend in the pool (this one and
// st.Others), and says so in one line when that changes: which pool, the
// workers, the share this one counts on, and the limiter's used.
func (p *Pacer) share(st ingest.PoolState) {
	was, now := p.workers[st.Pool], 1+max(st.Others, 0)
	p.workers[st.Pool] = now
	switch {
	case now > 1 && now != max(was, 1):
		p.logger().Info("pace: workers of other databases spend in the pool's window; counting on a share of it",
			"pool", st.Pool, "workers", now, "share", Share(st), "used", st.Used)
	case now == 1 && was > 1:
		p.logger().Info("pace: no other worker's spend is left in the pool's window; counting on the whole pool",
			"pool", st.Pool, "used", st.Used)
	}
}
