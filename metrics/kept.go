package metrics

import "github.com/prometheus/client_golang/prometheus"

// Kept are the gauges of the readers' answers a web server keeps in
// memory, read from held at each scrape: what a flood of URLs does to the
// memory shows there, against its bound.
func Kept(held func() (answers, bytes int)) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_kept_answers",
			Help: "Readers' answers kept in memory (docs/api.md: at most 2048)."},
			func() float64 { n, _ := held(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_web_kept_bytes",
			Help: "Bytes of the readers' answers kept in memory (docs/api.md: at most 24 MiB)."},
			func() float64 { _, b := held(); return float64(b) }),
	}
}
