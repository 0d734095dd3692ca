package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest"
)

// StateReader is what the metrics read of a limiter at scrape time.
type StateReader interface {
	State(ctx context.Context) ([]ingest.PoolState, error)
	Backend() string
}

var (
	limiterUpDesc = prometheus.NewDesc("ingest_limiter_up",
		"1 when the limiter answered this scrape, 0 when it did not (the pools' series are then absent).", []string{"backend"}, nil)
	remainingDesc = prometheus.NewDesc("ingest_quota_remaining_units",
		"Units the limiter can still admit in the trailing window, by pool.", []string{"pool"}, nil)
	usedDesc = prometheus.NewDesc("ingest_quota_used_units",
		"Units the limiter counts in the trailing window, by pool.", []string{"pool"}, nil)
	blockedDesc = prometheus.NewDesc("ingest_quota_blocked_until_timestamp_seconds",
		"Unix time until which the upstream blocked the pool; 0 when it is not blocked.", []string{"pool"}, nil)
	recoveryDesc = prometheus.NewDesc("ingest_limiter_recovery_wait_until_timestamp_seconds",
		"Unix time until which the limiter holds the pool's metered calls while it recovers what it lost (a data loss, a move); 0 when it waits for nothing.", []string{"pool"}, nil)
	undecidedDesc = prometheus.NewDesc("ingest_limiter_undecided",
		"1 while the Redis limiter waits because it cannot tell a new Redis from one that lost its data (it holds none of this "+
			"ledger's calls of the window): for a new Redis run the new_redis command, for a wiped one the lost_data command, "+
			"with the database of every host that spent in the window; 0 otherwise.", nil,
		prometheus.Labels{"new_redis": "ingest quota seed --ledger DB...", "lost_data": "ingest quota restore --ledger DB..."})
	neverReachedDesc = prometheus.NewDesc("ingest_limiter_never_reached",
		"1 while the Redis limiter has not answered once since this process started: a mistyped REDIS_URL or host, "+
			"or an outage that began before the start; 0 once it has answered.", nil, nil)
)

// neverReacher is a limiter that can say it has not answered this process
// once (quota.Redis).
type neverReacher interface{ NeverReached() bool }

// undecider is a limiter that can say it cannot tell a new Redis from a
// wiped one (quota.Redis).
type undecider interface {
	Undecided(ctx context.Context) (string, error)
}

// limiterCollector reads the pools at scrape time. A limiter that does not
// answer gives ingest_limiter_up 0 and no pool series.
type limiterCollector struct{ l StateReader }

func (c *limiterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{limiterUpDesc, remainingDesc, usedDesc, blockedDesc, recoveryDesc, undecidedDesc, neverReachedDesc} {
		ch <- d
	}
}

func (c *limiterCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pools, err := c.l.State(ctx)
	if n, ok := c.l.(neverReacher); ok {
		v := 0.0
		if n.NeverReached() {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(neverReachedDesc, prometheus.GaugeValue, v)
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(limiterUpDesc, prometheus.GaugeValue, 0, c.l.Backend())
		return
	}
	ch <- prometheus.MustNewConstMetric(limiterUpDesc, prometheus.GaugeValue, 1, c.l.Backend())
	for _, p := range pools {
		ch <- prometheus.MustNewConstMetric(remainingDesc, prometheus.GaugeValue, float64(p.Remaining), p.Pool)
		ch <- prometheus.MustNewConstMetric(usedDesc, prometheus.GaugeValue, float64(p.Used), p.Pool)
		var blocked float64
		if !p.BlockedUntil.IsZero() {
			blocked = float64(p.BlockedUntil.Unix())
		}
		ch <- prometheus.MustNewConstMetric(blockedDesc, prometheus.GaugeValue, blocked, p.Pool)
		ch <- prometheus.MustNewConstMetric(recoveryDesc, prometheus.GaugeValue, unixOrZero(p.WaitUntil), p.Pool)
	}
	if u, ok := c.l.(undecider); ok {
		if text, err := u.Undecided(ctx); err == nil {
			v := 0.0
			if text != "" {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(undecidedDesc, prometheus.GaugeValue, v)
		}
	}
}

// Limiter is the limiter a job takes units from: what Metered wraps.
type Limiter interface {
	Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error)
	Block(ctx context.Context, pool, op string) (time.Time, error)
	Refund(ctx context.Context, call ingest.Call) error
}

// Metered is a Limiter whose decisions m counts.
type Metered struct {
	Limiter
	m *Metrics
}

// Metered wraps next so that m counts its decisions.
func (m *Metrics) Metered(next Limiter) *Metered { return &Metered{Limiter: next, m: m} }

// Take decides one call, as the limiter it wraps does, and counts it.
func (l *Metered) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	d, err := l.Limiter.Take(ctx, by, op)
	l.m.Decided(op, d, err)
	return d, err
}

// unixOrZero is t as Unix seconds, 0 for the zero time: a rule compares it
// with time().
func unixOrZero(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix())
}
