package metrics

import "github.com/prometheus/client_golang/prometheus"

// Kept are the gauges of the readers' answers a web server keeps in
// memory, read from held at each scrape: what a flood of URLs does to the
// memory shows there, against its bound.
func Kept(held func() (answers, bytes int)) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_kept_answers",
			Help: "Readers' answers kept in memory (docs/reference/api/caching.md: at most 2048)."},
			func() float64 { n, _ := held(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_kept_bytes",
			Help: "Bytes of the readers' answers kept in memory (docs/reference/api/caching.md: at most 24 MiB)."},
			func() float64 { _, b := held(); return float64(b) }),
	}
}

// KeptBuilds are the counters of the builds of the readers' kept answers,
// read from built at each scrape: first builds (of a page with no copy,
// which the requests for it wait for), builds beside the requests (of a
// copy out of date, served meanwhile), and the requests that waited for
// a first build. A reader of a kept page waits only for its first.
func KeptBuilds(built func() (first, beside, waited int64)) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_kept_builds_total",
			Help: keptBuildsHelp, ConstLabels: prometheus.Labels{"how": "first"}},
			func() float64 { n, _, _ := built(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_kept_builds_total",
			Help: keptBuildsHelp, ConstLabels: prometheus.Labels{"how": "beside"}},
			func() float64 { _, n, _ := built(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_kept_waits_total",
			Help: "Requests that waited for the first build of a reader's answer (docs/reference/api/caching.md)."},
			func() float64 { _, _, n := built(); return float64(n) }),
	}
}

const keptBuildsHelp = "Builds of readers' answers to keep: how=first, of a page with no copy; how=beside, of a copy out of date, served meanwhile (docs/reference/api/caching.md)."

// Budget are the series of the budget anonymous readers' builds run
// within, read from figures at each scrape: the builds it admitted and
// the requests it answered 503 busy (by outcome), the builds running in
// it and the requests waiting for a turn now, and how many it runs at
// once. A flood's share of the site shows there: busy answers rising
// while the hot pages are served.
func Budget(figures func() (admitted, refused int64, running, waiting, slots int)) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_budget_requests_total",
			Help: budgetHelp, ConstLabels: prometheus.Labels{"outcome": "admitted"}},
			func() float64 { n, _, _, _, _ := figures(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_budget_requests_total",
			Help: budgetHelp, ConstLabels: prometheus.Labels{"outcome": "busy"}},
			func() float64 { _, n, _, _, _ := figures(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_budget_running",
			Help: "Anonymous readers' builds running within the site's budget now (docs/reference/api/caching.md)."},
			func() float64 { _, _, n, _, _ := figures(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_budget_waiting",
			Help: "Anonymous readers' requests waiting for a turn in the site's budget now (docs/reference/api/caching.md)."},
			func() float64 { _, _, _, n, _ := figures(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_budget_slots",
			Help: "Anonymous readers' builds the site's budget runs at once (docs/reference/api/caching.md)."},
			func() float64 { _, _, _, _, n := figures(); return float64(n) }),
	}
}

// Purges are the counters of the purges sent to the caches in front when
// a landing moved the data, read from figures at each scrape: requests a
// cache took, tries again after a failure, batches given up after every
// try, and batches a cache's full queue lost (its next purge is the whole
// site). A cache that stops taking them shows there before its readers
// see old pages.
func Purges(figures func() (sent, retried, failed, overflowed int64)) []prometheus.Collector {
	var out []prometheus.Collector
	for i, outcome := range []string{"sent", "retried", "failed", "overflowed"} {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_web_purges_total",
			Help: purgesHelp, ConstLabels: prometheus.Labels{"outcome": outcome}},
			func() float64 {
				s, r, f, o := figures()
				return float64([]int64{s, r, f, o}[i])
			}))
	}
	return out
}

const purgesHelp = "Purges sent to the caches in front (--purge-url) when the data moved: outcome=sent, taken; retried, tried again after a failure; failed, given up, sent again from the mark kept at the next read; overflowed, lost to a full queue, the whole site purged next (docs/operations/readers.md)."

const budgetHelp = "Anonymous readers' requests for a build (a search, a miss, a page not kept): outcome=admitted, given a turn in the site's budget; outcome=busy, answered 503 with Retry-After, no turn within a second (docs/reference/api/caching.md)."
